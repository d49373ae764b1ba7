import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isoTime } from '../../application/iso-time.ts';

describe('isoTime', () => {
  it('writes exactly what toISOString writes: each millisecond of a second, across seconds, before 1970 and past year 9999', () => {
    const starts = [Date.UTC(2026, 10, 24, 16, 0, 0), Date.UTC(1969, 11, 31, 23, 59, 59), -62198755200000, 253402300799000, 8.64e15 - 2000];
    for (const start of starts) {
      for (let offset = 0; offset < 2000; offset += 7) {
        const date = new Date(start + offset);
        assert.equal(isoTime(date), date.toISOString());
      }
    }
    // Going back to an earlier second after a later one.
    for (const time of [Date.UTC(2030, 0, 1), Date.UTC(2020, 0, 1, 0, 0, 0, 5), Date.UTC(2030, 0, 1, 0, 0, 0, 999)]) {
      assert.equal(isoTime(new Date(time)), new Date(time).toISOString());
    }
  });

  it('refuses an invalid date as toISOString does', () => {
    assert.throws(() => isoTime(new Date(Number.NaN)), RangeError);
  });
});
