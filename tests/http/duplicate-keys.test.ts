import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { duplicatedKey } from '../../adapters/http/parsing/json-body.ts';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { snapshotStore } from '../support/store-snapshot.ts';

/** A key sent twice in one object is refused, never taken with its last value: nothing a client sent is silently dropped. */

let api: TestService;

before(async () => {
  api = await startTestService();
});
after(async () => {
  await api.stop();
});

interface DocumentOperation {
  operationId: string;
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown>; $ref?: string } }> };
}

/** Every operation of the served document that takes a JSON body, with a path to send it to. */
async function operationsWithBodies(): Promise<Array<{ method: string; path: string; operationId: string; mediaType: string }>> {
  const document = (await (await api.request('/v1/openapi.json')).json()) as { paths: Record<string, Record<string, DocumentOperation>> };
  const found = [];
  for (const [template, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (operation.requestBody === undefined) continue;
      // Path parameters that name something absent: the body is read before the route looks anything up.
      const path = '/v1' + template.replace('{petId}', '1').replace('{orderId}', '1').replace(/\{[^}]+\}/g, 'absent-name');
      found.push({ method: method.toUpperCase(), path, operationId: operation.operationId, mediaType: Object.keys(operation.requestBody.content)[0]! });
    }
  }
  return found;
}

describe('a JSON body with a key written twice in one object', () => {
  it('is refused with 400 invalid_body naming the key, on every operation that takes a body', async () => {
    await api.createPet({ name: 'Rex', categoryId: 1 });
    const operations = await operationsWithBodies();
    assert.ok(operations.length >= 9, `found only ${operations.map((operation) => operation.operationId).join(', ')}`);
    for (const { method, path, operationId, mediaType } of operations) {
      const response = await api.request(path, { method, headers: { 'content-type': mediaType }, body: '{"status":"available","status":"sold"}' });
      assert.equal(response.status, 400, operationId);
      const error = await readError(response);
      assert.equal(error.code, 'invalid_body', operationId);
      assert.match(error.message, /the key "status" appears twice/, operationId);
    }
  });

  it('creates no pet and changes nothing when a POST /v1/pets names a field twice', async () => {
    const before = await snapshotStore((await api.database()).db);
    const response = await api.request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Rex","categoryId":1,"name":"Max"}' });
    assert.equal(response.status, 400);
    assert.equal((await readError(response)).code, 'invalid_body');
    assert.deepEqual(await snapshotStore((await api.database()).db), before);
  });
});

describe('duplicatedKey', () => {
  it('finds a key written twice in the same object, at any depth, compared as parsed', () => {
    assert.equal(duplicatedKey('{"consumer":"a","consumer":"b"}'), 'consumer');
    assert.equal(duplicatedKey('{"a":{"b":[{"c":1, "c" :2}]}}'), 'c');
    assert.equal(duplicatedKey('{"name":1,"n\\u0061me":2}'), 'name');
    assert.equal(duplicatedKey('{"a\\"b":1,"a\\"b":2}'), 'a"b');
  });

  it('lets the same key stand in different objects, and keys written inside strings', () => {
    assert.equal(duplicatedKey('{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}'), undefined);
    assert.equal(duplicatedKey('{"a":"\\"a\\":1","b":"a"}'), undefined);
    assert.equal(duplicatedKey('["a","a"]'), undefined);
    assert.equal(duplicatedKey('"a"'), undefined);
    assert.equal(duplicatedKey(`${'['.repeat(30_000)}${']'.repeat(30_000)}`), undefined);
  });
});
