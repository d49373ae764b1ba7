import assert from 'node:assert/strict';
import { openEventStream } from './event-stream-reader.ts';

/** How long a write may take to reach the stream before the check gives up: a bound on a hang, not a speed target. */
const ARRIVAL_BOUND_MS = 15_000;

/**
 * Writes through the other instances while a stream is open on the first: the stream must see every
 * write, in position order 1, 2, 3…, with no gap and nothing twice, without any instance restarting.
 */
export async function checkStreamSeesEveryInstance(bases: readonly string[], key: string, writes = 30): Promise<void> {
  const headers = { authorization: `Bearer ${key}` };
  const stream = await openEventStream(`${bases[0]}/events`, headers);
  try {
    assert.equal(stream.response.status, 200);
    const created: string[] = [];
    for (let index = 0; index < writes; index++) {
      const response = await fetch(`${bases[1 + (index % (bases.length - 1))]}/pets`, {
        method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: `pet ${index}`, categoryId: 1 }),
      });
      assert.equal(response.status, 201);
      created.push(`pets/${((await response.json()) as { id: number }).id}`);
    }
    const ids: string[] = [];
    const subjects: string[] = [];
    while (subjects.length < writes) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const message = await Promise.race([
        stream.nextEvent(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the stream saw ${subjects.length} of ${writes} writes made through the other instances`)), ARRIVAL_BOUND_MS);
        }),
      ]).finally(() => clearTimeout(timer));
      ids.push(message.id);
      subjects.push((JSON.parse(message.data) as { subject: string }).subject);
    }
    assert.deepEqual(ids, created.map((_, index) => String(index + 1)));
    assert.deepEqual(subjects, created);
  } finally {
    stream.close();
  }
}
