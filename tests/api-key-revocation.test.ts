import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createApiKeyVerifier, KEY_TABLE_REFRESH_MS, sha256Hex } from '../adapters/api-keys/key-verifier.ts';
import type { ApiKeyTable } from '../adapters/api-keys/key-verifier.ts';
import { openSqlite } from '../adapters/store/sqlite/open-sqlite.ts';
import { createManagedApiKeys } from '../adapters/api-keys/key-table.ts';
import { createSqlApiKeyTable } from '../adapters/store/tables/sql-api-key-table.ts';
import { sqliteSqlDialect } from '../adapters/store/sqlite/sqlite-sql-dialect.ts';
import { stepClocks } from './support/stepped-clocks.ts';
import { temporaryDirectory } from './support/temporary-store.ts';
import { startTestService } from './support/test-service.ts';
import { checkRevokedKeyStops } from './support/key-revocation.ts';
import { FAST_WEBHOOKS } from './support/webhook-load.ts';
import { openPetStore } from '../adapters/store/open-store.ts';
import pino from 'pino';

describe('API key revocation', () => {
  it('refuses a key revoked through the running service with the very next request', async () => {
    const api = await startTestService();
    try {
      const { id, key } = await api.service.apiKeys.create('short-lived', new Date());
      assert.equal((await api.request('/v1/pets', { key })).status, 200);
      assert.equal(await api.service.apiKeys.revoke(id, new Date()), true);
      assert.equal((await api.request('/v1/pets', { key })).status, 401);
    } finally {
      await api.stop();
    }
  });

  it('refuses a key revoked by another process (another connection to the file) within one second', async () => {
    const directory = temporaryDirectory('keys');
    const service = await openSqlite(directory.file('keys.db'));
    const cli = await openSqlite(directory.file('keys.db'));
    try {
      let clock = 0;
      const verifier = createApiKeyVerifier({ environmentKeys: [], table: createManagedApiKeys(createSqlApiKeyTable({ db: service.db, dialect: sqliteSqlDialect })), now: () => clock });
      const elsewhere = createManagedApiKeys(createSqlApiKeyTable({ db: cli.db, dialect: sqliteSqlDialect }));
      const { id, key } = await elsewhere.create('from the CLI', new Date());
      assert.equal((await verifier.verify(key)).ok, true);
      await elsewhere.revoke(id, new Date());
      clock = KEY_TABLE_REFRESH_MS - 1;
      assert.equal((await verifier.verify(key)).ok, true, 'still cached just under a second later');
      clock = KEY_TABLE_REFRESH_MS;
      assert.equal((await verifier.verify(key)).ok, false, 'refused once a second has passed');
    } finally {
      await service.db.destroy();
      await cli.db.destroy();
      directory.remove();
    }
  });

  it('refuses a key revoked by another process a second later by the monotonic clock, with the wall clock stepped back an hour', async () => {
    const directory = temporaryDirectory('keys');
    const service = await openSqlite(directory.file('keys.db'));
    const cli = await openSqlite(directory.file('keys.db'));
    const clocks = stepClocks();
    try {
      const verifier = createApiKeyVerifier({ environmentKeys: [], table: createManagedApiKeys(createSqlApiKeyTable({ db: service.db, dialect: sqliteSqlDialect })) });
      const elsewhere = createManagedApiKeys(createSqlApiKeyTable({ db: cli.db, dialect: sqliteSqlDialect }));
      const { id, key } = await elsewhere.create('from the CLI', new Date());
      assert.equal((await verifier.verify(key)).ok, true);
      await elsewhere.revoke(id, new Date());
      clocks.stepWall(-3_600_000);
      clocks.pass(KEY_TABLE_REFRESH_MS);
      assert.equal((await verifier.verify(key)).ok, false, 'refused once a second has passed');
    } finally {
      clocks.restore();
      await service.db.destroy();
      await cli.db.destroy();
      directory.remove();
    }
  });

  it('does not let a table read that began before a revocation bring the key back', async () => {
    // A key table in memory whose reads finish when the test says so.
    const live = new Map([[sha256Hex('key-that-gets-revoked-0001'), 7]]);
    const listeners: (() => void)[] = [];
    const pendingReads: (() => void)[] = [];
    const table: ApiKeyTable = {
      activeKeyHashes: () => {
        const snapshot = new Map(live);
        return new Promise((resolve) => pendingReads.push(() => resolve(snapshot)));
      },
      onChange: (listener) => listeners.push(listener),
    };
    const verifier = createApiKeyVerifier({ environmentKeys: [], table, now: () => 0 });
    const before = verifier.verify('key-that-gets-revoked-0001');
    live.clear();
    for (const listener of listeners) listener(); // the revocation, through this process
    const after = verifier.verify('key-that-gets-revoked-0001');
    assert.equal(pendingReads.length, 2, 'the check after the revocation reads the table again');
    // The newer read finishes first; the older one, with the key still in it, last.
    pendingReads[1]!();
    pendingReads[0]!();
    await before;
    assert.equal((await after).ok, false, 'a check that began after the revocation refuses the key');
    assert.equal((await verifier.verify('key-that-gets-revoked-0001')).ok, false, 'and the older read did not bring it back');
  });

  it('ends a revoked key\'s open event streams and disables its webhook subscriptions when another process revokes it', async () => {
    const api = await startTestService(FAST_WEBHOOKS);
    // The CLI's way: its own connection to the file.
    const cli = await openPetStore({ kind: 'sqlite', path: `${api.directory}/petstore.db` }, { logger: pino({ level: 'silent' }) });
    try {
      const keys = createManagedApiKeys(cli.apiKeyTable);
      await checkRevokedKeyStops([api], { revoke: (id) => keys.revoke(id, new Date()), subscriptions: cli.webhookSubscriptions });
    } finally {
      await cli.close();
      await api.stop();
    }
  });
});
