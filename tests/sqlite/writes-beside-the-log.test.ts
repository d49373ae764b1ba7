import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openTemporaryStore } from '../support/temporary-store.ts';

describe('SQLite writes beside the log, several in one transaction', () => {
  it('commits those that waited together once, and rolls one that fails back alone, having written nothing', async () => {
    const opened = await openTemporaryStore('sqlite');
    try {
      const write = opened.store.writeOutsideLog!;
      const names = async () => (await opened.store.db.selectFrom('sequences').select('name').where('name', 'like', 'beside-%').orderBy('name').execute()).map((row) => row.name);
      const insert = (name: string) => (db: Parameters<Parameters<typeof write>[0]>[0]) => db.insertInto('sequences').values({ name, value: 1 }).execute();
      const outcomes = await Promise.allSettled([
        write(async (db) => {
          await insert('beside-a')(db);
          return 'a';
        }),
        write(async (db) => {
          await insert('beside-b')(db);
          throw new Error('b changed its mind');
        }),
        write(async (db) => {
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
    const opened = await openTemporaryStore('sqlite');
    try {
      const write = opened.store.writeOutsideLog!;
      const ran: string[] = [];
      const answered: string[] = [];
      const note = (name: string) => async () => {
        ran.push(`${name} ran; answered: ${answered.join(',') || 'none'}`);
        return name;
      };
      // b is asked on the next turn, before the turn in which a's transaction would begin.
      const second = new Promise((resolve) => setImmediate(resolve)).then(() => write(note('b'))).then((name) => answered.push(name));
      const first = write(note('a')).then((name) => answered.push(name));
      await Promise.all([first, second]);
      assert.deepEqual(ran, ['a ran; answered: none', 'b ran; answered: none'], 'b ran before a was committed and answered: one commit for both');
    } finally {
      await opened.close();
    }
  });
});
