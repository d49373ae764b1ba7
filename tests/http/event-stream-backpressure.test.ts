import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { EventLog, LogQuery } from '../../application/index.ts';
import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';
import { createEventStreams } from '../../adapters/http/routes/event-stream.ts';

const EVENTS = 50_000;

describe('an event stream to a consumer that stops reading', () => {
  it('reads the log no further than the socket takes (the log is the buffer), then delivers all of it once the consumer reads', { timeout: 120_000 }, async () => {
    const store = createInMemoryPetStore();
    const name = 'n'.repeat(200);
    await Promise.all(Array.from({ length: EVENTS }, (_, index) =>
      store.eventStore.append([{
        streamId: `pet-${index + 1}`, expected: 'no_stream', events: [{ type: 'PetAdded', data: { id: index + 1, name, categoryId: 1, status: null } }],
        stateAfter: { kind: 'present', pet: { id: index + 1, name, categoryId: 1 } },
      }], { recordedAt: '2026-11-24T00:00:00.000Z' })));
    let read = 0;
    const eventLog: Pick<EventLog, 'readLog'> = {
      async readLog(query: LogQuery) {
        const page = await store.eventLog.readLog(query);
        read += page.length;
        return page;
      },
    };
    const streams = createEventStreams({ eventLog, commits: store.commits }, { maxStreams: 1, maxStreamsPerClient: 1, heartbeatMs: 600_000 });
    let buffered = 0;
    const server = createServer((_request, response) => {
      const serving = streams.admit('127.0.0.1', '1')(response, { after: 0 }, 'http://127.0.0.1/v1');
      const sample = setInterval(() => (buffered = Math.max(buffered, response.writableLength)), 5);
      void serving.finally(() => clearInterval(sample));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      socket.pause();
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n');
      // Until the server stops reading: the kernel's buffers are full and it waits for them to drain.
      for (let last = -1; read !== last; ) {
        last = read;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      assert.ok(read < EVENTS / 2, `read ${read} of ${EVENTS} events for a consumer that took none`);
      assert.ok(buffered < 1024 * 1024, `the response buffered ${buffered} bytes`);

      let text = '';
      const ids: number[] = [];
      socket.setEncoding('utf8');
      await new Promise<void>((resolve) => {
        socket.on('data', (chunk: string) => {
          text += chunk;
          for (let match; (match = /\nid: (\d+)\n/.exec(text)); text = text.slice(match.index + match[0].length)) ids.push(Number(match[1]));
          if (ids.at(-1) === EVENTS) resolve();
        });
        socket.resume();
      });
      assert.equal(ids.length, EVENTS);
      assert.ok(ids.every((id, index) => id === index + 1), 'every position once, in order');
    } finally {
      streams.close();
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
