import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ackLeases, claimEvents, createPet, readPet, setStatus } from './petstore-requests.ts';
import type { Target } from './petstore-requests.ts';

/** The recorder writes an answer it could not read as unknown (`info`), never as an `ok` with a hole in it. */

let answer: { status: number; headers: Record<string, string>; body: string };
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => response.writeHead(answer.status, answer.headers).end(answer.body));
});
let target: Target;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, key: 'history-key-0123456789', timeoutMs: 5000 };
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const POSITIONED = { 'content-type': 'application/json', 'petstore-position': '7', etag: '"2"' };

describe('the recorder, given answers it cannot read', () => {
  it('records a 201 whose body was cut short, or holds no id, as info', async () => {
    for (const body of ['{"id":', '{"name":"Rex"}', '<html>created</html>', '']) {
      answer = { status: 201, headers: POSITIONED, body };
      const outcome = await createPet(target, { name: 'Rex', categoryId: 1 });
      assert.equal(outcome.type, 'info', body);
      assert.deepEqual(outcome.value, { status: 201, error: 'unreadable answer: id is not a whole number' });
    }
  });

  it('records a 201 without its position, and a 200 to a status change without its ETag, as info', async () => {
    answer = { status: 201, headers: { 'content-type': 'application/json' }, body: '{"id":3}' };
    assert.equal((await createPet(target, { name: 'Rex', categoryId: 1 })).type, 'info');
    answer = { status: 200, headers: { 'petstore-position': '7' }, body: '{"id":3}' };
    assert.equal((await setStatus(target, { id: 3, status: 'sold' })).type, 'info');
    assert.equal((await readPet(target, { id: 3 })).type, 'info');
  });

  it('records claims and acks it cannot read as info', async () => {
    answer = { status: 200, headers: POSITIONED, body: 'not json' };
    assert.equal((await claimEvents(target, { group: 'g', consumer: 'c', max: 1 })).type, 'info');
    assert.equal((await ackLeases(target, { group: 'g', leases: ['a'] })).type, 'info');
    answer = { status: 200, headers: POSITIONED, body: '{"acked":1}' };
    assert.equal((await ackLeases(target, { group: 'g', leases: ['a'] })).type, 'info');
  });

  it('still records what it can read as ok', async () => {
    answer = { status: 201, headers: POSITIONED, body: '{"id":3,"name":"Rex","categoryId":1}' };
    assert.deepEqual(await createPet(target, { name: 'Rex', categoryId: 1 }), { type: 'ok', value: { id: 3, position: 7 } });
  });
});
