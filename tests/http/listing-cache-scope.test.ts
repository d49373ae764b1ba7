import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createListingCache } from '../../adapters/http/listing-cache/listing-cache.ts';
import type { ListingScope } from '../../adapters/http/listing-cache/listing-cache.ts';
import type { Commit, Commits, RowChange } from '../../application/index.ts';

/** Commits told by hand. */
function toldChanges(): Commits & { tell(changes: readonly RowChange[] | undefined): void; refreshes: number } {
  const listeners: ((commit: Commit) => void)[] = [];
  return {
    refreshes: 0,
    onCommitted: (listener) => {
      listeners.push(listener);
      return () => {};
    },
    refresh() {
      this.refreshes += 1;
    },
    tell: (changes) => listeners.forEach((listener) => listener(changes === undefined ? {} : { changes })),
  };
}

const answer = (text: string) => ({ body: Buffer.from(text), link: undefined });

function cacheWith(scope: ListingScope) {
  const changes = toldChanges();
  const cache = createListingCache(changes);
  cache.set('q', cache.mark(), answer('[]'), scope);
  return { changes, cache };
}

describe('listing cache: which changes drop which answers', () => {
  const page: ListingScope = { status: 'available', after: 10, through: 20 };

  it('drops an answer when a pet of its filter changes inside its id range, ends included', () => {
    for (const id of [11, 15, 20]) {
      const { changes, cache } = cacheWith(page);
      changes.tell([{ table: 'pets', id, statuses: ['available'] }]);
      assert.equal(cache.get('q'), undefined, `id ${id}`);
    }
  });

  it('keeps an answer when the change is outside its range (a new pet past the look-ahead, or at or before after)', () => {
    for (const id of [10, 21, 1000]) {
      const { changes, cache } = cacheWith(page);
      changes.tell([{ table: 'pets', id, statuses: ['available'] }]);
      assert.ok(cache.get('q'), `id ${id}`);
    }
  });

  it('keeps a filtered answer when the change never had or has its status, and drops it when the pet leaves or enters it', () => {
    const untouched = cacheWith(page);
    untouched.changes.tell([{ table: 'pets', id: 15, statuses: ['pending', 'sold'] }]);
    assert.ok(untouched.cache.get('q'));
    for (const statuses of [['available', 'sold'], [null, 'available']] as const) {
      const touched = cacheWith(page);
      touched.changes.tell([{ table: 'pets', id: 15, statuses }]);
      assert.equal(touched.cache.get('q'), undefined);
    }
  });

  it('drops an unfiltered answer for a change of any status in range, and a last page for any later id', () => {
    const unfiltered = cacheWith({ status: undefined, after: 0, through: 20 });
    unfiltered.changes.tell([{ table: 'pets', id: 5, statuses: [null] }]);
    assert.equal(unfiltered.cache.get('q'), undefined);
    const last = cacheWith({ status: undefined, after: 0, through: Infinity });
    last.changes.tell([{ table: 'pets', id: 10_000_000, statuses: ['sold'] }]);
    assert.equal(last.cache.get('q'), undefined);
  });

  it('drops everything when the changes are unknown', () => {
    const { changes, cache } = cacheWith(page);
    cache.set('other', cache.mark(), answer('[1]'), { status: 'sold', after: 500, through: 600 });
    changes.tell(undefined);
    assert.equal(cache.get('q'), undefined);
    assert.equal(cache.get('other'), undefined);
  });

  it('refuses an answer read before a change it may not reflect', () => {
    const changes = toldChanges();
    const cache = createListingCache(changes);
    const mark = cache.mark();
    changes.tell([{ table: 'pets', id: 999, statuses: ['sold'] }]);
    cache.set('q', mark, answer('[]'), page);
    assert.equal(cache.get('q'), undefined);
  });

  it('looks for changes made elsewhere on every lookup', () => {
    const { changes, cache } = cacheWith(page);
    cache.get('q');
    cache.get('q');
    assert.equal(changes.refreshes, 2);
  });

  it('stays within its byte budget, letting the oldest answers go first', () => {
    const changes = toldChanges();
    const cache = createListingCache(changes, 3 * 1024);
    const body = 'x'.repeat(700);
    for (const key of ['a', 'b', 'c', 'd', 'e']) cache.set(key, cache.mark(), answer(body), page);
    assert.deepEqual(['a', 'b', 'c', 'd', 'e'].map((key) => cache.get(key) !== undefined), [false, false, true, true, true]);
  });

  it('keeps a short body in memory of its own, not as a slice of the shared buffer pool', async () => {
    const changes = toldChanges();
    const cache = createListingCache(changes);
    const sent = answer('[{"id":1,"name":"Rex","categoryId":1}]');
    assert.ok(sent.body.buffer.byteLength > sent.body.length, 'Buffer.from gives a pool slice for a short string');
    cache.set('q', cache.mark(), sent, page);
    const kept = (await cache.get('q'))!.body;
    assert.equal(kept.toString(), sent.body.toString());
    assert.equal(kept.buffer.byteLength, kept.length);
  });
});

describe('listing cache: the cost of staying exact', () => {
  /** A change whose fields count how often they are read: what the cache does per answer it holds would read them per answer. */
  function countedChange(id: number, statuses: RowChange['statuses']) {
    const reads = { count: 0 };
    const change = {
      table: 'pets',
      get id() {
        reads.count += 1;
        return id;
      },
      get statuses() {
        reads.count += 1;
        return statuses;
      },
    };
    return { change, reads };
  }

  /** A cache holding `count` distinct last pages, `limit=1&after=<1000000+i>` (as many distinct valid queries do), and one first page. */
  function cacheOfLastPages(count: number) {
    const changes = toldChanges();
    const cache = createListingCache(changes, 64 * 1024 * 1024);
    for (let index = 0; index < count; index++) {
      cache.set(`limit=1&after=${1_000_000 + index}`, cache.mark(), answer('[]'), { status: undefined, after: 1_000_000 + index, through: Infinity });
    }
    cache.set('limit=1', cache.mark(), answer('[{"id":1}]'), { status: 'sold', after: 0, through: 2 });
    return { changes, cache };
  }

  it('reads a commit\'s changes as often with 20,000 answers cached as with 20', () => {
    const reads = [20, 20_000].map((count) => {
      const { changes, cache } = cacheOfLastPages(count);
      const { change, reads: counted } = countedChange(5, [null, 'available']);
      changes.tell([change]);
      assert.ok(cache.get(`limit=1&after=${1_000_000 + count - 1}`), 'a pet before every range drops none of them');
      return counted.count;
    });
    assert.equal(reads[1], reads[0]);
  });

  it('drops exactly the answers a commit touches among 20,000, and keeps the rest', () => {
    const { changes, cache } = cacheOfLastPages(20_000);
    changes.tell([{ table: 'pets', id: 1_000_010, statuses: [null, 'pending'] }]);
    for (let index = 0; index < 20_000; index += 1) {
      assert.equal(cache.get(`limit=1&after=${1_000_000 + index}`) === undefined, index < 10, `after=${1_000_000 + index}`);
    }
    assert.ok(cache.get('limit=1'), 'a filtered first page the change is outside of');
  });
});
