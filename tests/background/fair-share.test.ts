import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBackgroundWork } from '../../adapters/background/fair-share.ts';

/** A clock the test moves, and the pauses the scheduler asked for, released when the test says so. */
function harness(share: number) {
  let clock = 0;
  const pauses: number[] = [];
  const pending: (() => void)[] = [];
  const background = createBackgroundWork({ share, now: () => clock, after: (ms, then) => {
    pauses.push(ms);
    pending.push(then);
  } });
  const releaseAll = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { background, pauses, releaseAll, advance: (ms: number) => (clock += ms) };
}

describe('background work in turns', () => {
  it('runs one piece at a time, the owners taking turns whatever the number of pieces each has waiting', async () => {
    const { background, releaseAll } = harness(1 / 3);
    const order: string[] = [];
    let running = 0;
    let mostAtOnce = 0;
    const piece = (owner: string, index: number) => background.run(owner, async () => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise((resolve) => setImmediate(resolve));
      order.push(`${owner}${index}`);
      running--;
    });
    const all = [
      ...Array.from({ length: 6 }, (_, index) => piece('B', index)),
      ...Array.from({ length: 2 }, (_, index) => piece('C', index)),
      piece('D', 0),
    ];
    for (let settled = false; !settled;) {
      await releaseAll();
      settled = await Promise.race([Promise.all(all).then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
    }
    assert.equal(mostAtOnce, 1);
    // B0 started at once and B1 came before C0: then one each in turn.
    assert.deepEqual(order, ['B0', 'B1', 'C0', 'D0', 'B2', 'C1', 'B3', 'B4', 'B5']);
  });

  it('leaves requests the rest of the time while they come, and takes what is free when none does', async () => {
    const { background, pauses, releaseAll, advance } = harness(1 / 3);
    const piece = () => background.run('B', async () => {
      advance(30);
    });
    let first = piece();
    await releaseAll();
    await first;
    assert.deepEqual(pauses, [0], 'no request: only the event loop\'s turn');
    background.requestTaken();
    first = piece();
    await releaseAll();
    await first;
    assert.deepEqual(pauses, [0, 60], 'serving requests: a piece of 30 ms is followed by 60 ms for them at a third');
    advance(500);
    first = piece();
    await releaseAll();
    await first;
    assert.deepEqual(pauses, [0, 60, 0], 'the requests stopped: no pause');
  });

  it('passes a piece\'s failure to its caller and goes on with the next', async () => {
    const { background, releaseAll } = harness(1 / 3);
    const failing = background.run('B', () => Promise.reject(new Error('the database is busy')));
    const next = background.run('B', async () => 'done');
    await assert.rejects(failing, /busy/);
    await releaseAll();
    assert.equal(await next, 'done');
  });
});
