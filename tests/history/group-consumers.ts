import type { HistoryFile } from './history-file.ts';
import { ackLeases, claimEvents, createGroup, parkLeases, readGroup, replayParked } from './petstore-requests.ts';
import type { GroupSettings, Outcome, Target } from './petstore-requests.ts';
import { pause, pick, record } from './workload.ts';

/** The run's one group: leases short enough that kills and pauses let some expire; parking left to a poison event, which the workload has none of. */
export const HISTORY_GROUP: GroupSettings = { group: 'history', ackTimeoutMs: 2000, maxDeliveries: 100, start: 'beginning' };
const CLAIM_MAX = 20;
/** How often a consumer dies after a claim (its leases left to expire, their events handed out again) and how often it stalls (acks once they expired: stale). */
const DEATH_RATE = 0.1;
const STALL_RATE = 0.05;
/** How often a consumer parks what it claimed instead of acking it, and how often it replays the parked events (the checkpoint moves back). */
const PARK_RATE = 0.05;
const REPLAY_RATE = 0.02;
/** How often a consumer that parked replays the parked events right away (while the parked leases would still be live). */
const REPLAY_AFTER_PARK_RATE = 0.5;
/** A bound on the drain at the end, so that a group that never settles ends the run instead of hanging it. */
const DRAIN_BOUND_MS = 60_000;

interface GroupOptions {
  readonly history: HistoryFile;
  readonly targets: readonly Target[];
  readonly random: () => number;
}

const leasesOf = (outcome: Outcome): string[] =>
  (outcome.type === 'ok' ? (outcome.value.claims as { lease: string }[]).map((claim) => claim.lease) : []);

/** Creates the run's group, tried again while the service cannot answer (recorded as `group-create`). */
export async function createHistoryGroup(options: GroupOptions, attempts = 20): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await record(options.history, 'group-setup', 'group-create', { ...HISTORY_GROUP }, () => createGroup(pick(options.random, options.targets), HISTORY_GROUP));
    if (outcome.type === 'ok') return;
    if (attempt === attempts) throw new Error(`the consumer group could not be created: ${JSON.stringify(outcome.value)}`);
    await pause(250);
  }
}

/**
 * A consumer of the group: claims up to 20 events and acks them all; now and then it dies instead
 * (leaves the leases to expire), stalls past the leases' expiry before it acks, parks them (a nack
 * with `park`), replays the parked events, or reads the group's state. Resolves once it has seen `stopped()`.
 */
export async function groupConsumer(options: GroupOptions & { readonly stopped: () => boolean }, process: string): Promise<void> {
  const { history, random } = options;
  const { group } = HISTORY_GROUP;
  while (!options.stopped()) {
    const target = () => pick(random, options.targets);
    if (random() < 0.05) {
      await record(history, process, 'group', { group }, () => readGroup(target(), group, false));
      continue;
    }
    if (random() < REPLAY_RATE) {
      await record(history, process, 'replay', { group }, () => replayParked(target(), group));
      continue;
    }
    const claimed = await record(history, process, 'claim', { group, consumer: process, max: CLAIM_MAX }, () => claimEvents(target(), { group, consumer: process, max: CLAIM_MAX }));
    const leases = leasesOf(claimed);
    if (leases.length === 0) {
      await pause(claimed.type === 'ok' ? 20 + random() * 30 : 50 + random() * 100);
      continue;
    }
    const fate = random();
    if (fate < DEATH_RATE) continue;
    if (fate < DEATH_RATE + STALL_RATE) await pause(HISTORY_GROUP.ackTimeoutMs + 500);
    else if (fate < DEATH_RATE + STALL_RATE + PARK_RATE) {
      await record(history, process, 'nack', { group, leases, park: true }, () => parkLeases(target(), { group, leases }));
      if (random() < REPLAY_AFTER_PARK_RATE) await record(history, process, 'replay', { group }, () => replayParked(target(), group));
      continue;
    }
    await record(history, process, 'ack', { group, leases }, () => ackLeases(target(), { group, leases }));
  }
}

/**
 * Once the workload has stopped: claims and acks until a claim hands out nothing while no lease the
 * history knows of can still be live (every lease acked, or handed out over `ackTimeoutMs` ago, an
 * unknown claim counted from when it was given up), then reads the group's state with its parked
 * positions (`drained`: whether that happened within the bound).
 */
export async function drainGroup(options: GroupOptions, process = 'group-drain'): Promise<void> {
  const { history, random } = options;
  const { group, ackTimeoutMs } = HISTORY_GROUP;
  const began = Date.now();
  // The consumers' leases may be live until ackTimeoutMs after they stopped.
  let liveUntil = Date.now() + ackTimeoutMs;
  let drained = false;
  while (Date.now() - began < DRAIN_BOUND_MS) {
    const invokedAt = Date.now();
    const claimed = await record(history, process, 'claim', { group, consumer: process, max: 100 }, () => claimEvents(pick(random, options.targets), { group, consumer: process, max: 100 }));
    const leases = leasesOf(claimed);
    if (claimed.type === 'info') liveUntil = Math.max(liveUntil, Date.now() + ackTimeoutMs);
    if (claimed.type === 'ok' && leases.length === 0 && invokedAt > liveUntil) {
      drained = true;
      break;
    }
    if (leases.length === 0) {
      await pause(200);
      continue;
    }
    const acked = await record(history, process, 'ack', { group, leases }, () => ackLeases(pick(random, options.targets), { group, leases }));
    if (acked.type !== 'ok') liveUntil = Math.max(liveUntil, Date.now() + ackTimeoutMs);
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    const outcome = await record(history, process, 'group', { group, drained }, () => readGroup(pick(random, options.targets), group, true));
    if (outcome.type === 'ok') return;
    await pause(250);
  }
}
