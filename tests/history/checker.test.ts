import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { checkHistory } from '../../tools/check-history/check.ts';
import { NotAHistory } from '../../tools/check-history/history.ts';
import { NODE_TS_ARGS } from '../support/processes.ts';
import { temporaryDirectory } from '../support/temporary-store.ts';
import { ackStep, added, changed, claimed, claimStep, cleanGroupSteps, cleanLog, cleanSteps, groupReadStep, historyText } from './hand-made-history.ts';
import type { Served, Step } from './hand-made-history.ts';

const CLI = fileURLToPath(new URL('../../tools/check-history/check-history.ts', import.meta.url));

const Rex = { id: 1, name: 'Rex', categoryId: 1 };
const Kit = { id: 2, name: 'Kit', categoryId: 2 };
const Tom = { id: 3, name: 'Tom', categoryId: 1 };

/** The clean steps with some replaced (by their place) and some added before the final log read. */
function planted(replaced: Record<number, Partial<Step>>, extra: readonly Step[] = [], log: readonly Served[] = cleanLog()): Step[] {
  const steps = cleanSteps(log).map((step, at) => ({ ...step, ...replaced[at] }));
  return [...steps.slice(0, -1), ...extra, steps.at(-1)!];
}

/** The index that names the step at `at` in a finding: its completion's (each step is an invoke and a completion). */
const completionOf = (at: number) => 2 * at + 1;

function anomalies(steps: readonly Step[]) {
  const result = checkHistory(historyText(steps));
  assert.equal(result.valid, Object.keys(result.anomalies).length === 0);
  return result.anomalies;
}

function assertOnly(steps: readonly Step[], name: string, namedOp?: number) {
  const found = anomalies(steps);
  assert.deepEqual(Object.keys(found), [name], JSON.stringify(found));
  if (namedOp !== undefined) assert.ok(found[name]!.some((finding) => finding.ops.includes(namedOp)), JSON.stringify(found));
  return found[name]!;
}

const feedSecond = 14;

/** The clean history with the clean group's steps, some replaced (by their place among those) and some inserted before one. */
function withGroup(replaced: Record<number, Partial<Step>> = {}, inserted: { before: number; steps: readonly Step[] } = { before: Infinity, steps: [] }): Step[] {
  const group = cleanGroupSteps().map((step, at) => ({ ...step, ...replaced[at] }));
  const at = Math.min(inserted.before, group.length);
  return planted({}, [...group.slice(0, at), ...inserted.steps, ...group.slice(at)]);
}
/** The index that names the group step at `at` (among the group's steps) in a finding. */
const groupCompletion = (at: number) => completionOf(15 + at);

const lastEvents = (events: readonly Served[]): Partial<Step> => ({ value: { events } });

describe('the history checker on hand-made histories', () => {
  it('passes a clean history: retried keys, refusals, unknown outcomes that did and did not happen, a reconnecting consumer', () => {
    const result = checkHistory(historyText(cleanSteps()));
    assert.deepEqual(result, { valid: true, ops: 16, anomalies: {}, unusable: [] });
  });

  it('names lost-write: a change acknowledged at a position the log does not hold', () => {
    const lost = { process: 'd', f: 'set-status', invoke: { id: 3, status: 'pending' }, outcome: 'ok', value: { version: 2, position: 7 } } as const;
    const [finding] = assertOnly(planted({}, [lost]), 'lost-write', completionOf(15));
    assert.deepEqual(finding!.positions, [7]);
  });

  it('names lost-write: a creation acknowledged whose event in the log holds another category', () => {
    const log = cleanLog().map((event) => (event.id === '2' ? added(2, 2, 'Kit', 9, null) : event));
    assertOnly(planted({ 12: { value: { pets: [{ ...Kit, categoryId: 9, status: 'available' }] } }, 11: { value: { pets: [{ ...Kit, categoryId: 9, status: 'available' }, { ...Tom, status: 'available' }] } } }, [], log), 'lost-write', completionOf(1));
  });

  it('does not count an unknown outcome as lost: an indeterminate change absent from the log', () => {
    const unknown = { process: 'd', f: 'set-status', invoke: { id: 3, status: 'pending' }, outcome: 'info', value: { error: 'timeout' } } as const;
    assert.deepEqual(anomalies(planted({}, [unknown, { process: 'e', f: 'create', invoke: { name: 'Max', categoryId: 1 } }])), {});
  });

  it('names phantom-write: an event no client sent', () => {
    const [finding] = assertOnly(planted({}, [], [...cleanLog(), changed(7, 3, 'available', 'pending')]), 'phantom-write');
    assert.deepEqual(finding!.positions, [7]);
  });

  it('names phantom-write: an event that answers only a request refused with a 4xx', () => {
    const refused = { process: 'd', f: 'set-status', invoke: { id: 3, status: 'pending' }, outcome: 'fail', value: { code: 'illegal_transition' } } as const;
    const [finding] = assertOnly(planted({}, [refused], [...cleanLog(), changed(7, 3, 'available', 'pending')]), 'phantom-write', completionOf(15));
    assert.match(finding!.why, /refused/);
  });

  it('names duplicate-create: one creation (one name) that made two pets', () => {
    const [finding] = assertOnly(planted({}, [], [...cleanLog(), added(7, 4, 'Tom', 1, 'available')]), 'duplicate-create', completionOf(9));
    assert.deepEqual(finding!.positions, [6, 7]);
  });

  it('names duplicate-create: one Idempotency-Key answered with two pets', () => {
    const found = anomalies(planted({ 8: { outcome: 'ok', value: { id: 3, position: 6 } }, 9: { value: { id: 4, position: 7 } } }, [], [...cleanLog(), added(7, 4, 'Tom', 1, 'available')]));
    assert.ok(found['duplicate-create']?.some((finding) => finding.ops.includes(completionOf(8)) && finding.ops.includes(completionOf(9)) && /Idempotency-Key k1/.test(finding.why)), JSON.stringify(found));
  });

  it('names feed-skip: a consumer that missed an event between two it received', () => {
    const log = cleanLog();
    const [finding] = assertOnly(planted({ [feedSecond]: lastEvents([log[3]!, log[5]!]) }), 'feed-skip', completionOf(feedSecond));
    assert.deepEqual(finding!.positions, [5]);
  });

  it('names feed-duplicate: a position received twice across a reconnect', () => {
    const log = cleanLog();
    const [finding] = assertOnly(planted({ [feedSecond]: { invoke: { after: 2 }, value: { events: log.slice(2) } } }), 'feed-duplicate');
    assert.deepEqual(finding!.ops, [completionOf(13), completionOf(feedSecond)]);
    assert.deepEqual(finding!.positions, [3]);
  });

  it('names feed-reorder: positions out of order', () => {
    const log = cleanLog();
    const [finding] = assertOnly(planted({ [feedSecond]: lastEvents([log[3]!, log[5]!, log[4]!]) }), 'feed-reorder', completionOf(feedSecond));
    assert.deepEqual(finding!.positions, [5]);
  });

  it('names feed-mismatch: an event unlike the log\'s at its position', () => {
    const log = cleanLog();
    assertOnly(planted({ [feedSecond]: lastEvents([log[3]!, log[4]!, added(6, 3, 'Tim', 1, 'available')]) }), 'feed-mismatch', completionOf(feedSecond));
  });

  it('names stale-read: a read at a minimum position that returns an older version', () => {
    assertOnly(planted({ 5: { value: { pet: { ...Rex, status: 'available' }, version: 1 } } }), 'stale-read', completionOf(5));
  });

  it('names stale-read: a listing at a minimum position that misses a pet matching its filter since', () => {
    assertOnly(planted({ 11: { value: { pets: [{ ...Tom, status: 'available' }] } } }), 'stale-read', completionOf(11));
  });

  it('names lost-update: two changes on one If-Match both acknowledged as appended', () => {
    const [finding] = assertOnly(planted({ 3: { outcome: 'ok', value: { version: 2, position: 3 } } }), 'lost-update');
    assert.deepEqual(finding!.ops, [completionOf(2), completionOf(3)]);
  });

  it('names realtime-order: a write acknowledged before another was sent holds the later position', () => {
    const max = { process: 'd', f: 'create', invoke: { name: 'Max', categoryId: 1 }, outcome: 'ok', value: { id: 4, position: 8 } } as const;
    const bo = { process: 'd', f: 'create', invoke: { name: 'Bo', categoryId: 1 }, outcome: 'ok', value: { id: 5, position: 7 } } as const;
    const [finding] = assertOnly(planted({}, [max, bo], [...cleanLog(), added(7, 5, 'Bo', 1, null), added(8, 4, 'Max', 1, null)]), 'realtime-order');
    assert.deepEqual(finding!.ops, [completionOf(15), completionOf(16)]);
  });

  it('names invalid-transition: a change whose from is not the pet\'s status before it', () => {
    const log = cleanLog().map((event) => (event.id === '5' ? changed(5, 1, 'available', 'sold') : event));
    const [finding] = assertOnly(planted({}, [], log), 'invalid-transition', completionOf(6));
    assert.deepEqual(finding!.positions, [3, 5]);
  });

  it('names invalid-transition: a change the status rules forbid (sold is final)', () => {
    const unknown = { process: 'd', f: 'set-status', invoke: { id: 1, status: 'available' }, outcome: 'info', value: {} } as const;
    const [finding] = assertOnly(planted({}, [unknown], [...cleanLog(), changed(7, 1, 'sold', 'available')]), 'invalid-transition', completionOf(15));
    assert.match(finding!.why, /sold → available/);
  });

  it('names list-invalid: longer than its limit, out of id order, at or below after, a pet whose status never matched', () => {
    assertOnly(planted({ 12: { value: { pets: [{ ...Kit, status: 'available' }, { ...Tom, status: 'available' }] } } }), 'list-invalid', completionOf(12));
    assertOnly(planted({ 11: { value: { pets: [{ ...Tom, status: 'available' }, { ...Kit, status: 'available' }] } } }), 'list-invalid', completionOf(11));
    assertOnly(planted({ 12: { value: { pets: [{ ...Rex, status: 'sold' }] } } }), 'list-invalid', completionOf(12));
    const pending = { process: 'd', f: 'list', invoke: { status: 'pending', limit: 10 }, outcome: 'ok', value: { pets: [{ ...Kit, status: 'pending' }] } } as const;
    const [finding] = assertOnly(planted({}, [pending]), 'list-invalid', completionOf(15));
    assert.match(finding!.why, /never was pending/);
  });

  it('names read-invalid: a read answered with a pet unlike the log\'s', () => {
    assertOnly(planted({ 5: { value: { pet: { ...Rex, name: 'Max', status: 'pending' }, version: 2 } } }), 'read-invalid', completionOf(5));
  });

  it('passes a clean history with a consumer group: per-pet order, a dead consumer\'s events handed out again after its leases expired, its late ack stale, a drain to the head', () => {
    assert.deepEqual(checkHistory(historyText(withGroup())), { valid: true, ops: 28, anomalies: {}, unusable: [] });
  });

  it('names group-skip: an event at or below the final checkpoint that no one acked and that is not parked', () => {
    const [finding] = assertOnly(withGroup({ 9: { f: 'group', invoke: { group: 'g' }, value: { checkpoint: 4, head: 6, inFlight: 1 } } }), 'group-skip', groupCompletion(11));
    assert.deepEqual(finding!.positions, [5]);
    assert.deepEqual(anomalies(withGroup({ 9: { f: 'group', invoke: { group: 'g' }, value: { checkpoint: 4, head: 6, inFlight: 1 } }, 11: { value: { checkpoint: 6, head: 6, inFlight: 0, parked: [5] } } })), {});
  });

  it('does not count an ack without an answer as a skip: it may have settled the event', () => {
    assert.deepEqual(anomalies(withGroup({ 9: { outcome: 'info', value: { error: 'timeout' } } })), {});
  });

  it('names group-double-ack: one position acked by two acks, each answered acked, not stale', () => {
    const found = assertOnly(withGroup({ 6: ackStep('c1', ['L3', 'L4']) }), 'group-double-ack');
    assert.deepEqual(found.map((finding) => finding.positions), [[3], [4]]);
    assert.deepEqual(found[0]!.ops, [groupCompletion(6), groupCompletion(7)]);
  });

  it('names group-order: a pet\'s event handed out in the claim that holds its earlier one, or while that one is under a live lease', () => {
    const log = cleanLog();
    const [sameClaim] = assertOnly(withGroup({ 4: { value: claimed(log, [3, 'L3'], [4, 'L4'], [5, 'L5x']) } }), 'group-order');
    assert.deepEqual(sameClaim!.ops, [groupCompletion(4)]);
    assert.deepEqual(sameClaim!.positions, [3, 5]);
    const [live] = assertOnly(withGroup({}, { before: 5, steps: [claimStep('c2', claimed(log, [5, 'L5x']))] }), 'group-order');
    assert.deepEqual(live!.ops, [groupCompletion(4), groupCompletion(5)]);
    assert.deepEqual(live!.positions, [3, 5]);
  });

  it('does not name group-order when the earlier event\'s lease may have expired by then', () => {
    const log = cleanLog();
    assert.deepEqual(anomalies(withGroup({}, { before: 5, steps: [claimStep('c2', claimed(log, [5, 'L5x']), 1500)] })), {});
  });

  it('names group-mismatch: a claimed event unlike the log\'s at its position', () => {
    const other = claimed([added(5, 1, 'Rex', 1, 'sold')], [5, 'L5']);
    const [finding] = assertOnly(withGroup({ 8: { value: other } }), 'group-mismatch', groupCompletion(8));
    assert.deepEqual(finding!.positions, [5]);
  });

  it('names group-checkpoint: a drained group whose checkpoint is below the head, and a checkpoint past events acked only after it was read', () => {
    assertOnly(withGroup({ 11: groupReadStep('drain', { checkpoint: 5, head: 6, inFlight: 0, parked: [] }, true) }), 'group-checkpoint', groupCompletion(11));
    const [early] = assertOnly(withGroup({ 3: { value: { checkpoint: 4, head: 6, inFlight: 2 } } }), 'group-checkpoint');
    assert.deepEqual(early!.ops, [groupCompletion(3), groupCompletion(7)]);
    assert.deepEqual(early!.positions, [3, 4]);
  });

  it('refuses what is not a history: not JSON, a completion never invoked, two operations outstanding in one process, no final log, an operation it does not know', () => {
    const text = historyText(cleanSteps());
    const lines = text.trim().split('\n');
    const bad = [
      `${text}{not json\n`,
      lines.slice(1).join('\n'),
      [lines[0], lines[2], ...lines.slice(3)].join('\n'),
      lines.slice(0, -2).join('\n'),
      [...lines.slice(0, 4), ...lines.slice(4, 6).map((line) => line.replace('"f":"set-status"', '"f":"set-statsu"')), ...lines.slice(6)].join('\n'),
      text.replace('"value":{"name":"Rex","categoryId":1,"status":"available"}', '"value":null'),
    ];
    for (const history of bad) assert.throws(() => checkHistory(history), NotAHistory);
    assert.throws(() => checkHistory(bad[4]!), /line 5: f "set-statsu" is not an operation of a history \(create, set-status, /);
  });

  it('checks the rest of a history holding an answer it could not read: that operation counts as unknown, and the record is named with why', () => {
    const unreadCreation = { 1: { value: { position: 2 } } };
    const lost = { process: 'd', f: 'set-status', invoke: { id: 3, status: 'pending' }, outcome: 'ok', value: { version: 2, position: 7 } } as const;
    const result = checkHistory(historyText(planted(unreadCreation, [lost])));
    assert.deepEqual(Object.keys(result.anomalies), ['lost-write']);
    assert.equal(result.ops, 17);
    assert.equal(result.unusable.length, 1);
    assert.equal(result.unusable[0]!.record, completionOf(1));
    assert.equal(result.unusable[0]!.f, 'create');
    assert.match(result.unusable[0]!.why, /^create ok: id is missing; its outcome is counted as unknown \(info\)$/);
    assert.deepEqual(checkHistory(historyText(planted(unreadCreation))).anomalies, {}, 'the unread creation may have written Kit');
  });

  it('leaves out an operation whose request it could not read, and names the record', () => {
    const result = checkHistory(historyText(planted({ 3: { invoke: { status: 'pending', ifMatch: 1 } } })));
    assert.deepEqual(result.anomalies, {});
    assert.equal(result.ops, 15);
    assert.deepEqual(result.unusable.map(({ record, f }) => [record, f]), [[2 * 3, 'set-status']]);
    assert.match(result.unusable[0]!.why, /^set-status invoke: id is missing; the operation is left out$/);
  });

  it('takes "value": null on a completion: a request that got no answer', () => {
    const text = historyText(cleanSteps()).replace('"value":{"error":"timeout"}', '"value":null');
    assert.match(text, /"type":"info","f":"set-status","time":\d+,"value":null/);
    assert.deepEqual(checkHistory(text), { valid: true, ops: 16, anomalies: {}, unusable: [] });
  });

  it('runs as `npm run check:history -- FILE`: one JSON object, exit 0 valid, 1 an anomaly, 2 not a history', () => {
    const directory = temporaryDirectory('check-history');
    try {
      const run = (steps: string) => {
        const file = directory.file(`history-${Math.random()}.jsonl`);
        writeFileSync(file, steps);
        const result = spawnSync(process.execPath, [...NODE_TS_ARGS, CLI, file], { encoding: 'utf8' });
        const lines = result.stdout.trim().split('\n');
        assert.equal(lines.length, 1, result.stdout + result.stderr);
        return { code: result.status, output: JSON.parse(lines[0]!) as Record<string, unknown> };
      };
      assert.deepEqual(run(historyText(cleanSteps())), { code: 0, output: { valid: true, ops: 16, anomalies: {}, unusable: [] } });
      const log = cleanLog();
      const skipped = run(historyText(planted({ [feedSecond]: lastEvents([log[3]!, log[5]!]) })));
      assert.equal(skipped.code, 1);
      assert.deepEqual(Object.keys(skipped.output.anomalies as object), ['feed-skip']);
      const broken = run('{"index": 0}\n');
      assert.equal(broken.code, 2);
      assert.equal(broken.output.valid, false);
      const unread = run(historyText(planted({ 1: { value: { position: 2 } } })));
      assert.equal(unread.code, 0);
      assert.deepEqual((unread.output.unusable as { record: number }[]).map(({ record }) => record), [completionOf(1)]);
    } finally {
      directory.remove();
    }
  });

  it('answers --help with its usage and exit 0, and no file or an unknown option with its usage and exit 2', () => {
    for (const help of ['--help', '-h']) {
      const result = spawnSync(process.execPath, [...NODE_TS_ARGS, CLI, help], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /^usage: npm run check:history -- FILE\n/);
      assert.match(result.stdout, /Exit 0: valid; 1: an anomaly found; 2: FILE is not a history/);
    }
    for (const wrong of [[], ['--verbose'], ['a.jsonl', 'b.jsonl']]) {
      const result = spawnSync(process.execPath, [...NODE_TS_ARGS, CLI, ...wrong], { encoding: 'utf8' });
      assert.equal(result.status, 2, wrong.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^usage: npm run check:history -- FILE\n/);
    }
  });

  it('follows its JSON line with a short summary on a terminal only', () => {
    const directory = temporaryDirectory('check-history');
    try {
      const file = directory.file('history.jsonl');
      writeFileSync(file, historyText(planted({ 1: { value: { position: 2 } }, [feedSecond]: lastEvents([cleanLog()[3]!, cleanLog()[5]!]) })));
      const command = [process.execPath, ...NODE_TS_ARGS, CLI, file].map((word) => `'${word}'`).join(' ');
      // script(1) runs the command on a pseudo-terminal of its own.
      const onTerminal = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' });
      const lines = onTerminal.stdout.replaceAll('\r', '').trim().split('\n');
      const skip = checkHistory(readFileSync(file, 'utf8')).anomalies['feed-skip']![0]!;
      assert.equal(JSON.parse(lines[0]!).valid, false);
      assert.deepEqual(lines.slice(1), [
        '',
        `${file}: NOT VALID, 16 operations checked`,
        `  feed-skip: 1 (first: operations ${skip.ops.join(', ')}: ${skip.why})`,
        `  1 record(s) could not be used (first: record ${completionOf(1)}: create ok: id is missing; its outcome is counted as unknown (info))`,
      ]);
      const piped = spawnSync(process.execPath, [...NODE_TS_ARGS, CLI, file], { encoding: 'utf8' });
      assert.equal(piped.stdout.trim().split('\n').length, 1);
    } finally {
      directory.remove();
    }
  });
});
