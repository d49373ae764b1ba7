import { DEFAULT_EVENT_LIMIT } from '../../../application/index.ts';
import { parseDecimalInteger } from '../../../contract/decimal-integer.ts';
import { CLOUD_EVENT_TYPES, cloudEventTypeOf, eventTypeNamed } from '../../../contract/event-feed.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { plainInteger, readQuery, single } from './list-query.ts';

export interface EventFeedQuery {
  readonly after?: number;
  readonly limit?: number;
  readonly types?: readonly string[];
  readonly petId?: number;
}

/**
 * Reads `after`, `limit`, `type` and `petId` from the raw query string, each as its type; the use case
 * checks the numbers' ranges. `type` takes CloudEvents type
 * names, repeated (`type=a&type=b`) or as a comma list (`type=a,b`), or both: any of them matches.
 */
export function parseEventQuery(querystring: string): EventFeedQuery {
  const params = readQuery(querystring);
  const after = plainInteger('after', single(params, 'after'));
  const limit = plainInteger('limit', single(params, 'limit'));
  const petId = plainInteger('petId', single(params, 'petId'));
  const typeNames = params.getAll('type').flatMap((value) => value.split(','));
  const types: string[] = [];
  for (const name of typeNames) {
    const type = eventTypeNamed(name);
    if (type === undefined) {
      throw new HttpProblem('invalid_query', `type must be one of ${Object.values(CLOUD_EVENT_TYPES).join(', ')}, got ${JSON.stringify(name)}`);
    }
    if (!types.includes(type)) types.push(type);
  }
  return {
    ...(after === undefined ? {} : { after }),
    ...(limit === undefined ? {} : { limit }),
    ...(typeNames.length === 0 ? {} : { types }),
    ...(petId === undefined ? {} : { petId }),
  };
}

/** `Last-Event-ID`, the position a reconnecting stream saw last: plain digits, like `after`. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  const position = parseDecimalInteger(text);
  if (position === undefined) throw new HttpProblem('invalid_header', `Last-Event-ID must be a log position in plain digits, got ${JSON.stringify(text.slice(0, 40))}`);
  return position;
}

/** The query string that continues the feed after `after`, with the same filters and limit. */
export function nextEventQuery(query: EventFeedQuery, after: number): string {
  const params = new URLSearchParams({ after: String(after), limit: String(query.limit ?? DEFAULT_EVENT_LIMIT) });
  if (query.types !== undefined) params.set('type', query.types.map(cloudEventTypeOf).join(','));
  if (query.petId !== undefined) params.set('petId', String(query.petId));
  return params.toString();
}
