import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openEventStream } from './support/event-stream-reader.ts';
import type { EventStreamReader } from './support/event-stream-reader.ts';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const KEY = 'feed-crash-key-0123456789';
const headers = { authorization: `Bearer ${KEY}` };

describe('the event stream across a crash (SIGKILL) of the service', () => {
  it('resuming from the last id seen after the restart gives every acknowledged write, in order, nothing twice', { timeout: 120_000 }, async () => {
    const directory = temporaryDirectory('feed-crash');
    const environment = { PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY };
    const services: ServiceProcess[] = [];
    const seen: { id: number; subject: string }[] = [];
    const acknowledged = new Set<string>();
    /** Writes through `base` until it stops answering; each 201 is an acknowledged write. */
    const write = async (base: string, count: number) => {
      for (let index = 0; index < count; index++) {
        try {
          const response = await fetch(`${base}/pets`, {
            method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name: `p${index}`, categoryId: 1 }),
          });
          if (response.status !== 201) return;
          acknowledged.add(`pets/${((await response.json()) as { id: number }).id}`);
        } catch {
          return;
        }
      }
    };
    const read = async (stream: EventStreamReader, until: () => boolean) => {
      while (!until()) {
        const message = await stream.nextEvent();
        seen.push({ id: Number(message.id), subject: (JSON.parse(message.data) as { subject: string }).subject });
      }
    };
    try {
      services.push(startServiceProcess(environment));
      const first = await services[0]!.listening;
      const stream = await openEventStream(`${first}/events`, headers);
      const writing = write(first, 1_000);
      await read(stream, () => seen.length >= 40);
      services[0]!.signal('SIGKILL');
      await services[0]!.exited;
      await writing;
      await stream.ended().catch(() => undefined);

      services.push(startServiceProcess(environment));
      const second = await services[1]!.listening;
      await write(second, 20);
      const resumed = await openEventStream(`${second}/events`, { ...headers, 'last-event-id': String(seen.at(-1)!.id) });
      const expected = Number(((await (await fetch(`${second}/events?after=${seen.at(-1)!.id}&limit=1000`, { headers })).json()) as { id: string }[]).at(-1)?.id ?? seen.at(-1)!.id);
      await read(resumed, () => seen.at(-1)!.id >= expected);
      resumed.close();

      assert.deepEqual(seen.map((event) => event.id), seen.map((_, index) => index + 1), 'positions 1, 2, 3… with no gap and nothing twice');
      const subjects = new Set(seen.map((event) => event.subject));
      assert.equal(subjects.size, seen.length);
      for (const subject of acknowledged) assert.ok(subjects.has(subject), `acknowledged ${subject} reached the consumer`);
    } finally {
      for (const service of services) service.cleanup();
      directory.remove();
    }
  });
});
