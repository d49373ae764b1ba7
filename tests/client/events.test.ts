import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPetStoreClient, PetStoreError } from 'petstore/client';
import type { CloudEvent, CloudEventType, PetStoreClient } from 'petstore/client';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

describe('client.events and client.petHistory against the service', () => {
  let api: TestService;
  let client: PetStoreClient;
  before(async () => {
    api = await startTestService();
    client = createPetStoreClient({ baseUrl: api.baseUrl, apiKey: TEST_API_KEY });
  });
  after(() => api.stop());

  it('iterates the log, then each new commit, with filters; petHistory gives the same events', async () => {
    const first = await client.createPet({ name: 'Rex', categoryId: 1 });
    await client.changePetStatus(first.id, 'pending');
    const seen: CloudEvent[] = [];
    const controller = new AbortController();
    for await (const event of client.events({ petId: first.id, types: ['com.petstore.pet.status-changed.v1'] }, { signal: controller.signal })) {
      seen.push(event);
      if (seen.length === 1) await client.changePetStatus(first.id, 'sold');
      if (seen.length === 2) break;
    }
    assert.deepEqual(seen.map((event) => [event.type, event.data]), [
      ['com.petstore.pet.status-changed.v1', { id: first.id, from: null, to: 'pending' }],
      ['com.petstore.pet.status-changed.v1', { id: first.id, from: 'pending', to: 'sold' }],
    ]);
    const history = await client.petHistory(first.id);
    assert.deepEqual(history.map((event) => event.type), ['com.petstore.pet.added.v1', 'com.petstore.pet.status-changed.v1', 'com.petstore.pet.status-changed.v1']);
    assert.deepEqual(history.slice(1), seen);
    const fromStart: string[] = [];
    for await (const event of client.events({ after: Number(history[0]!.id) - 1 })) {
      fromStart.push(event.id);
      if (fromStart.length === 3) break;
    }
    assert.deepEqual(fromStart, history.map((event) => event.id));
  });

  it('throws what retrying cannot mend: a refused filter, an unknown pet', async () => {
    const events = client.events({ types: ['nope' as CloudEventType] });
    await assert.rejects(events.next(), (error: unknown) => error instanceof PetStoreError && error.code === 'invalid_query');
    await assert.rejects(client.petHistory(999_999), (error: unknown) => error instanceof PetStoreError && error.code === 'not_found');
  });
});

describe('client.events over a broken connection', () => {
  it('opens the stream again after the last event it saw, so none is missed or repeated', async () => {
    const lastEventIds: (string | undefined)[] = [];
    const message = (id: number) => `id: ${id}\ndata: ${JSON.stringify({ specversion: '1.0', id: String(id) })}\n\n`;
    const server = createServer((request, response) => {
      lastEventIds.push(request.headers['last-event-id'] as string | undefined);
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (lastEventIds.length === 1) {
        response.write(`retry: 1\n\n${message(1)}${message(2)}id: 3\ndata: {"cut`);
        // A network failure in the middle of the third message.
        setTimeout(() => response.socket?.destroy(), 20);
      } else {
        response.write(message(3));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = createPetStoreClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'k'.repeat(20) });
      const ids: string[] = [];
      for await (const event of client.events({ after: 0 })) {
        ids.push(event.id);
        if (ids.length === 3) break;
      }
      assert.deepEqual(ids, ['1', '2', '3']);
      assert.deepEqual(lastEventIds, ['0', '2']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
