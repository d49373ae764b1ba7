import assert from 'node:assert/strict';
import fc from 'fast-check';
import { openEventStream } from './event-stream-reader.ts';

/**
 * The property: while writers add pets concurrently, a consumer that disconnects at random points and
 * resumes with `Last-Event-ID` ends with exactly the log (as the JSON feed gives it), in order, nothing
 * missed and nothing twice.
 */
export async function checkResumingConsumers(baseUrl: string, key: string, options: { runs?: number; seed?: number } = {}): Promise<void> {
  const headers = { authorization: `Bearer ${key}` };
  const head = async () => {
    let after = 0;
    for (;;) {
      const page = (await (await fetch(`${baseUrl}/events?after=${after}&limit=1000`, { headers })).json()) as { id: string }[];
      if (page.length === 0) return after;
      after = Number(page.at(-1)!.id);
    }
  };
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 25 }),
      fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 }),
      async (writes, readsPerConnection) => {
        const start = await head();
        const writing = Promise.all(Array.from({ length: writes }, async (_, index) => {
          const response = await fetch(`${baseUrl}/pets`, {
            method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: `w${index}`, categoryId: 1 }),
          });
          assert.equal(response.status, 201);
        }));
        const seen: { id: string; data: string }[] = [];
        for (let connection = 0; seen.length < writes; connection++) {
          const lastId = seen.at(-1)?.id ?? String(start);
          const stream = await openEventStream(`${baseUrl}/events?after=${start}`, { ...headers, 'last-event-id': lastId });
          try {
            assert.equal(stream.response.status, 200);
            const reads = readsPerConnection[connection % readsPerConnection.length]!;
            for (let read = 0; read < reads && seen.length < writes; read++) {
              const message = await stream.nextEvent();
              seen.push({ id: message.id, data: message.data });
            }
          } finally {
            stream.close();
          }
        }
        await writing;
        const feed = (await (await fetch(`${baseUrl}/events?after=${start}&limit=1000`, { headers })).json()) as unknown[];
        assert.deepEqual(seen.map((message) => JSON.parse(message.data)), feed);
        assert.deepEqual(seen.map((message) => Number(message.id)), Array.from({ length: writes }, (_, index) => start + index + 1));
      },
    ),
    { numRuns: options.runs ?? 15, ...(options.seed === undefined ? {} : { seed: options.seed }) },
  );
}
