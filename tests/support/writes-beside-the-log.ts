import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTemporaryStore } from './temporary-store.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';

type Write = NonNullable<SqlPetStore['writeOutsideLog']>;

/**
 * The writes beside the log of a backend (`write`: SQLite's `writeOutsideLog`, PostgreSQL's
 * `boundedTransaction`): those that wait together share one transaction, each in a savepoint of its own.
 */
export function writesBesideTheLogSuite(backend: 'sqlite' | 'postgres', writeOf: (store: SqlPetStore) => Write | undefined): void {
  const write = (opened: { readonly store: unknown }) => writeOf(opened.store as SqlPetStore)!;
  describe(`writes beside the log on ${backend}, several in one transaction`, () => {
    it('commits those that waited together once, and rolls one that fails back alone, having written nothing', async () => {
      const opened = await openTemporaryStore(backend);
      try {
        const names = async () => (await (opened.store as SqlPetStore).db.selectFrom('consumer_group_consumers').select('consumer').orderBy('consumer').execute()).map((row) => row.consumer);
        const insert = (name: string) => (db: Parameters<Parameters<Write>[0]>[0]) => db.insertInto('consumer_group_consumers').values({ owner_key_id: 'k', group_name: 'g', consumer: name, last_seen_at: new Date(0).toISOString() }).execute();
        const outcomes = await Promise.allSettled([
          write(opened)(async (db) => {
            await insert('beside-a')(db);
            return 'a';
          }),
          write(opened)(async (db) => {
            await insert('beside-b')(db);
            throw new Error('b changed its mind');
          }),
          write(opened)(async (db) => {
            await insert('beside-c')(db);
            return 'c';
          }),
        ]);
        assert.deepEqual(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)), ['a', 'b changed its mind', 'c']);
        assert.deepEqual(await names(), ['beside-a', 'beside-c'], 'the failed write wrote nothing');
      } finally {
        await opened.close();
      }
    });

    it('one arriving on the next turn of the event loop, as another consumer\'s claim does, joins the transaction of the first', async () => {
      const opened = await openTemporaryStore(backend);
      try {
        const ran: string[] = [];
        const answered: string[] = [];
        const note = (name: string) => async () => {
          ran.push(`${name} ran; answered: ${answered.join(',') || 'none'}`);
          return name;
        };
        // b is asked on the next turn, before the turn in which a's transaction would begin.
        const second = new Promise((resolve) => setImmediate(resolve)).then(() => write(opened)(note('b'))).then((name) => answered.push(name));
        const first = write(opened)(note('a')).then((name) => answered.push(name));
        await Promise.all([first, second]);
        assert.deepEqual(ran, ['a ran; answered: none', 'b ran; answered: none'], 'b ran before a was committed and answered: one commit for both');
      } finally {
        await opened.close();
      }
    });

    if (backend === 'postgres') {
      it('writes asked for together run in one transaction (one commit, one flush)', async () => {
        const opened = await openTemporaryStore(backend);
        try {
          const transactionId = (db: Parameters<Parameters<Write>[0]>[0]) => sql<{ id: string }>`select txid_current()::text as id`.execute(db).then(({ rows }) => rows[0]!.id);
          const ids = await Promise.all([write(opened)(transactionId), write(opened)(transactionId), write(opened)(transactionId)]);
          assert.equal(new Set(ids).size, 1, `transactions ${ids.join(', ')}`);
        } finally {
          await opened.close();
        }
      });
    }
  });
}
