import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { StoredEvent } from '../../application/index.ts';
import { cloudEventJson, cloudEventsJson } from '../../contract/cloud-events.ts';
import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { PET_STATUSES } from '../../domain/index.ts';

/** The CloudEvent as an object, stringified whole: the text the template must give, byte for byte. */
function stringifiedWhole(stored: StoredEvent, source: string): string {
  return JSON.stringify({
    specversion: '1.0',
    id: String(stored.position),
    source,
    type: CLOUD_EVENT_TYPES[stored.event.type as keyof typeof CLOUD_EVENT_TYPES],
    subject: `pets/${stored.event.data.id}`,
    time: stored.metadata.recordedAt,
    datacontenttype: 'application/json',
    data: stored.event.data,
  });
}

// Any text: quotes, backslashes, control characters, lone surrogates, characters outside the BMP.
const text = fc.string({ unit: 'binary', maxLength: 40 });
const status = fc.constantFrom(...PET_STATUSES);
const petId = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const storedEvent: fc.Arbitrary<StoredEvent> = fc.record({
  position: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  streamVersion: fc.integer({ min: 1, max: 1000 }),
  event: fc.oneof(
    fc.record({ type: fc.constant('PetAdded' as const), data: fc.record({ id: petId, name: text, categoryId: fc.integer(), status: fc.option(status) }) }),
    fc.record({ type: fc.constant('PetStatusChanged' as const), data: fc.record({ id: petId, from: fc.option(status), to: status }) }),
  ),
  recordedAt: fc.oneof(fc.date({ noInvalidDate: true }).map((date) => date.toISOString()), text),
}).map(({ position, streamVersion, event, recordedAt }) => ({
  position, streamId: `pet-${event.data.id}`, streamVersion, event,
  metadata: { schemaVersion: 1, recordedAt, keyId: 'key-1', requestId: 'request-1' },
}) as StoredEvent);

describe('CloudEvents text', () => {
  it('is, byte for byte, the event object stringified whole, whatever the names, times and source', () => {
    fc.assert(fc.property(storedEvent, fc.oneof(fc.webUrl(), text), (stored, source) => {
      assert.equal(cloudEventJson(stored, source), stringifiedWhole(stored, source));
    }), { numRuns: 2000 });
  });

  it('is the same text from an event read with its stored text, whose data it writes as it is', () => {
    fc.assert(fc.property(storedEvent, (stored) => {
      const withText: StoredEvent = { ...stored, text: { type: stored.event.type, dataJson: JSON.stringify(stored.event.data) } };
      assert.equal(cloudEventJson(withText, 'http://127.0.0.1/v1'), stringifiedWhole(stored, 'http://127.0.0.1/v1'));
      const spliced = { ...withText, text: { type: stored.event.type, dataJson: '{"spliced":true}' } };
      assert.match(cloudEventJson(spliced, 'http://127.0.0.1/v1'), /"data":\{"spliced":true\}\}$/, 'the stored text, not the data stringified again');
    }), { numRuns: 500 });
  });

  it('keeps each source apart when they alternate', () => {
    fc.assert(fc.property(fc.array(fc.tuple(storedEvent, fc.constantFrom('http://a.example/v1', 'https://b.example/"v1"'))), (pairs) => {
      for (const [stored, source] of pairs) assert.equal(cloudEventJson(stored, source), stringifiedWhole(stored, source));
    }));
  });

  it('makes an array the JSON listing parses back to the same objects, and leaves out who caused each event', () => {
    fc.assert(fc.property(fc.array(storedEvent, { maxLength: 5 }), (events) => {
      const listing = cloudEventsJson(events, 'http://127.0.0.1/v1');
      assert.deepEqual(JSON.parse(listing), events.map((stored) => JSON.parse(stringifiedWhole(stored, 'http://127.0.0.1/v1'))));
      assert.doesNotMatch(listing, /key-1|request-1/);
    }));
  });
});
