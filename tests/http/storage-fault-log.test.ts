import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StoreUnavailable } from '../../application/index.ts';
import { createRepeatedFaultLog } from '../../adapters/observability/repeated-fault-log.ts';
import { capturedLog } from '../support/captured-log.ts';

const full = () => new StoreUnavailable('the database\'s disk is full; try again later', { cause: Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }) });

describe('the log of a storage fault that keeps happening', () => {
  it('says it once with its SQLite code, then counts the repeats in one line a minute', () => {
    const { logger, lines } = capturedLog();
    let now = 0;
    const log = createRepeatedFaultLog(logger, () => now);
    for (let request = 0; request < 1000; request++) {
      log(full());
      now += 50; // 20 a second for 50 s
    }
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.code, 'SQLITE_FULL');
    assert.match(lines[0]!.msg, /storage fault/);
    assert.equal(lines[0]!.err, undefined, 'no stack');
    for (let request = 0; request < 400; request++) {
      log(full());
      now += 50;
    }
    assert.equal(lines.length, 2, 'one summary once a minute has passed');
    assert.equal(lines[1]!.repeats, 1200, 'the repeats after the first, up to the minute');
  });

  it('says each different fault once, and a fault back after a quiet spell afresh', () => {
    const { logger, lines } = capturedLog();
    let now = 0;
    const log = createRepeatedFaultLog(logger, () => now);
    log(full());
    log(new StoreUnavailable('the database is busy; try again'));
    log(full());
    assert.equal(lines.length, 2);
    now += 10 * 60_000;
    log(full());
    assert.equal(lines.length, 3);
    assert.match(lines[2]!.fault, /disk is full/);
  });
});
