import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findPostgresBin, startPostgresCluster } from '../../../scripts/postgres-cluster.ts';
import type { PostgresCluster } from '../../../scripts/postgres-cluster.ts';
import { readError, startTestService } from '../../support/test-service.ts';
import type { TestService } from '../../support/test-service.ts';

describe('the database going away and coming back', () => {
  // A cluster of its own: stopping the one the other tests share would fail them.
  let cluster: PostgresCluster;
  let api: TestService;

  before(async () => {
    const bin = findPostgresBin();
    if (!bin) throw new Error('this test needs PostgreSQL binaries in /usr/lib/postgresql/*/bin (Debian: apt-get install postgresql)');
    cluster = await startPostgresCluster(bin);
    api = await startTestService({ PETSTORE_DATABASE: cluster.url, PETSTORE_DATABASE_STATEMENT_TIMEOUT_MS: '2000' });
  });
  after(async () => {
    await api?.stop();
    await cluster?.destroy();
  });

  it('answers 503 unavailable while it is down, and recovers by itself when it returns', async () => {
    const created = await api.createPet({ name: 'Before', categoryId: 1, status: 'available' });
    assert.equal(created.status, 201);
    const before = (await created.json()) as { id: number };
    assert.equal(await api.service.store.ready(), true);

    await cluster.stop();
    const whileDown = [
      await api.request('/v1/pets'),
      await api.request(`/v1/pets/${before.id}`),
      await api.createPet({ name: 'During', categoryId: 1 }),
      await api.request(`/v1/pets/${before.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"status":"sold"}' }),
      await api.request('/v1/pets', { key: 'not-a-key-but-long-enough' }), // looked up in the key table, which is down too
    ];
    for (const response of whileDown) {
      assert.equal(response.status, 503, `${response.url} while the database is down`);
      assert.equal((await readError(response)).code, 'unavailable');
      assert.ok(response.headers.get('retry-after'));
    }
    assert.equal(await api.service.store.ready(), false);

    await cluster.start();
    assert.equal(await api.service.store.ready(), true);
    assert.equal((await api.request(`/v1/pets/${before.id}`)).status, 200);
    const after = await api.createPet({ name: 'After', categoryId: 1, status: 'pending' });
    assert.equal(after.status, 201);
    const changed = await api.request(`/v1/pets/${before.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"status":"sold"}' });
    assert.equal(changed.status, 200);
    const listed = (await (await api.request('/v1/pets')).json()) as Array<{ name: string; status: string }>;
    assert.deepEqual(listed.map((pet) => [pet.name, pet.status]), [['Before', 'sold'], ['After', 'pending']]);
  });
});
