import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createScopeIndex } from '../../adapters/http/listing-cache/scope-index.ts';

/** A range that counts how often the index looks at it. */
function countedRange(first: number, last: number, looks: { count: number }) {
  return {
    name: `[${first}, ${last}]`,
    get first() {
      looks.count += 1;
      return first;
    },
    get last() {
      looks.count += 1;
      return last;
    },
  };
}

/** A small deterministic generator, so that a failure can be replayed. */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('the scope index', () => {
  it('finds, for any id, exactly the ranges that hold it, and each only once', () => {
    const random = numbers(7);
    const index = createScopeIndex<{ first: number; last: number }>();
    const kept = new Set<{ first: number; last: number }>();
    const pick = (span: number) => 1 + Math.floor(random() * span);
    for (let round = 0; round < 3000; round++) {
      const action = random();
      if (action < 0.6) {
        const first = pick(random() < 0.5 ? 200 : 2 ** 40);
        const range = { first, last: random() < 0.2 ? 2 ** 53 : first + Math.floor(random() * 50) };
        index.add(range);
        kept.add(range);
      } else if (action < 0.7 && kept.size > 0) {
        const range = [...kept][Math.floor(random() * kept.size)]!;
        index.remove(range);
        kept.delete(range);
      } else {
        const id = random() < 0.8 ? pick(260) : pick(2 ** 40);
        const found: { first: number; last: number }[] = [];
        index.takeHolding(id, (range) => found.push(range));
        const expected = [...kept].filter((range) => range.first <= id && id <= range.last);
        assert.deepEqual(new Set(found), new Set(expected), `id ${id} in round ${round}`);
        assert.equal(found.length, expected.length, 'each range found once');
        for (const range of found) kept.delete(range);
      }
    }
  });

  it('looks at the ranges it finds and a bounded few others, as few among 20,000 ranges as among 20', () => {
    const looksFor = (count: number) => {
      const looks = { count: 0 };
      const index = createScopeIndex<ReturnType<typeof countedRange>>();
      for (let at = 0; at < count; at++) index.add(countedRange(1_000_001 + at, 2 ** 53, looks));
      for (let at = 0; at < count; at++) index.add(countedRange(10 + at * 7, 14 + at * 7, looks));
      looks.count = 0;
      const found: string[] = [];
      index.takeHolding(1_000_003, (range) => found.push(range.name));
      index.takeHolding(5, (range) => found.push(range.name));
      return { looks: looks.count, found };
    };
    const small = looksFor(20);
    const large = looksFor(20_000);
    assert.deepEqual(large.found, ['[1000001, 9007199254740992]', '[1000002, 9007199254740992]', '[1000003, 9007199254740992]']);
    assert.deepEqual(small.found, large.found);
    // At most one node per block size (55) is asked, and each list it scans stops at the first range that does not hold the id.
    assert.ok(large.looks <= 2 * (large.found.length + 55), `${large.looks} looks among 20,000 ranges`);
    assert.ok(small.looks <= 2 * (small.found.length + 55), `${small.looks} looks among 20 ranges`);
  });
});
