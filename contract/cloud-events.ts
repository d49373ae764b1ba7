import { aggregateOfStream, eventTypeOf } from '../application/index.ts';
import type { StoredEvent } from '../application/index.ts';

/** The text between an event's `source` and its id in its subject, by event type and aggregate: `type` and the start of `subject`. */
const typeAndSubject = new Map<string, string>();

function typeAndSubjectOf(type: string, streamId: string): string {
  let text = typeAndSubject.get(type);
  if (text === undefined) {
    const found = eventTypeOf(type);
    const subject = aggregateOfStream(streamId)?.aggregate.subject ?? streamId.slice(0, streamId.lastIndexOf('-'));
    text = `,"type":${JSON.stringify(found?.shape.cloudEventType ?? type)},"subject":${JSON.stringify(`${subject}/`).slice(0, -1)}`;
    typeAndSubject.set(type, text);
  }
  return text;
}

let lastSource = '';
let lastSourceJson = '""';

/** `source` as JSON: the same for every event a deployment sends, so quoted once. */
function sourceJson(source: string): string {
  if (source !== lastSource) {
    lastSourceJson = JSON.stringify(source);
    lastSource = source;
  }
  return lastSourceJson;
}

/**
 * One stored event as CloudEvents 1.0 structured JSON text: the same text in the JSON feed, a stream's
 * history and each SSE message. Its subject is its stream's: `<aggregate's subject>/<id>`. Only the
 * event itself leaves: none of who caused it (key id, request id, trace id) is in it. Built from a
 * template a type rather than one object stringified: a stream catching up sends hundreds of
 * thousands, and the text is `JSON.stringify` of the object, key for key.
 */
export function cloudEventJson(stored: StoredEvent, source: string): string {
  const { streamId, text } = stored;
  // Read with its stored text (a claim's events): written as it is, never parsed.
  const type = text?.type ?? stored.event.type;
  const data = text?.dataJson ?? JSON.stringify(stored.event.data);
  return `{"specversion":"1.0","id":"${stored.position}","source":${sourceJson(source)}${typeAndSubjectOf(type, streamId)}${streamId.slice(streamId.lastIndexOf('-') + 1)}","time":${
    JSON.stringify(stored.metadata.recordedAt)},"datacontenttype":"application/json","data":${data}}`;
}

/** Events as one JSON array, built from their texts. */
export function cloudEventsJson(events: readonly StoredEvent[], source: string): string {
  return `[${events.map((stored) => cloudEventJson(stored, source)).join(',')}]`;
}

/** An event's CloudEvents subject, from its stream: `<aggregate's subject>/<id>`. */
export function subjectOf(streamId: string): string {
  const dash = streamId.lastIndexOf('-');
  return `${aggregateOfStream(streamId)?.aggregate.subject ?? streamId.slice(0, dash)}/${streamId.slice(dash + 1)}`;
}
