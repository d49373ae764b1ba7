import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { currentSchemaVersion, eventMetadataText } from '../../application/index.ts';
import type { AppendMetadata, DomainEvent } from '../../application/index.ts';

describe('eventMetadataText', () => {
  it('writes exactly the JSON of the schema version followed by the append\'s metadata, for each event type', () => {
    const events: DomainEvent[] = [
      { type: 'PetAdded', data: { id: 1, name: 'Rex', categoryId: 1 } },
      { type: 'PetStatusChanged', data: { id: 1, from: 'available', to: 'pending', orderId: 2 } },
      { type: 'OrderPlaced', data: { id: 2, petId: 1, shipDate: null } },
    ];
    const metadatas: AppendMetadata[] = [
      { recordedAt: '2026-12-07T22:30:32.487Z' },
      { recordedAt: '2026-12-07T22:30:32.487Z', requestId: 'req "quoted" \u2028', apiKeyId: 'key-1', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' },
      { recordedAt: '2026-12-07T22:30:32.487Z', apiKeyId: 'key-1' },
    ];
    for (const event of events) {
      for (const metadata of metadatas) {
        const text = eventMetadataText(event, JSON.stringify(metadata));
        assert.equal(text, JSON.stringify({ schemaVersion: currentSchemaVersion(event.type), ...metadata }));
        assert.deepEqual(Object.keys(JSON.parse(text))[0], 'schemaVersion');
      }
    }
  });

  it('writes the schema version alone for empty metadata', () => {
    const event: DomainEvent = { type: 'PetAdded', data: { id: 1, name: 'Rex', categoryId: 1 } };
    assert.deepEqual(JSON.parse(eventMetadataText(event, '{}')), { schemaVersion: currentSchemaVersion('PetAdded') });
  });
});
