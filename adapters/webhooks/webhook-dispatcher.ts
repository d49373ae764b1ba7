import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { petStreamId } from '../../domain/index.ts';
import { afterFailure, followLog, secretsSigningAt, StoreUnavailable } from '../../application/index.ts';
import type {
  Clock, Commits, DeliveryRun, EventLog, NewWebhookAttempt, StoredEvent, WebhookDeliveryState, WebhookSubscription,
} from '../../application/index.ts';
import { WEBHOOK_ATTEMPTS_KEPT } from '../../contract/webhooks.ts';
import { cloudEventJson, cloudEventsJson } from '../../contract/cloud-events.ts';
import { createRepeatedFaultLog } from '../observability/repeated-fault-log.ts';
import { createBackgroundWork } from '../background/fair-share.ts';
import type { BackgroundWork } from '../background/fair-share.ts';
import { createWebhookConnections, sendWebhook, signedHeaders } from './webhook-request.ts';
import type { SendOutcome } from './webhook-request.ts';
import type { WebhookDelivery } from '../config/config.ts';

/** The turn of lease rounds among the owners of background work. */
const LEASE_ROUNDS = 'webhook leases';
/** How long a request holds its owner's turn at most while waiting for its answer. */
const SEND_TURN_MS = 5;
/** Bytes of a receiver's answer read at most: enough for an error line. */
const MAX_RESPONSE_BYTES = 16 * 1024;
/** Events read at a time per subscription; each is still sent alone, in order. */
const PAGE_EVENTS = 500;
/** One event alone is a CloudEvent in structured mode; a batch, the CloudEvents batch format (a JSON array, as the feed's pages). */
const SINGLE_TYPE = 'application/cloudevents+json; charset=utf-8';
const BATCH_TYPE = 'application/cloudevents-batch+json; charset=utf-8';
/** A store fault pauses a subscription's delivery this long before it tries again. */
const FAULT_PAUSE_MS = 1_000;
/** Events acknowledged one at a time but not yet stored, at most: beyond it delivery waits for the store (bounds resending after a crash). */
const UNSTORED_ACKNOWLEDGED_MAX = 1_000;
/**
 * Between two position writes of one subscription: an SQLite commit holds the thread, so writes come at most this often
 * and each stores the latest acknowledgement of the while (what a crash sends again is at most about this long of delivery).
 */
const POSITION_WRITE_SPACING_MS = 10;

export interface WebhookDispatcherOptions {
  readonly subscriptions: WebhookDeliveryState;
  readonly eventLog: Pick<EventLog, 'readLog'>;
  readonly commits: Pick<Commits, 'onCommitted'>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Each event's CloudEvents `source`: the deployment's public base address with /v1. */
  readonly source: () => string;
  readonly delivery: WebhookDelivery;
  /** Where every read and write of delivery takes its turn beside the process's other background work (its own when absent). */
  readonly background?: BackgroundWork;
}

export interface WebhookDispatcher {
  /** Looks for subscriptions to deliver now (one was created or resumed here) rather than at the next lease renewal. */
  poke(): void;
  /** A subscription's secret was rotated here: its next request is signed with the secrets read again. */
  rotated(id: string): void;
  /** A subscription was replayed here: if this instance delivers it, it starts over from the replayed position now rather than at its next look. */
  replayed(id: string): void;
  /**
   * A key was revoked (its subscriptions were disabled with the revocation): the loops of those this
   * instance delivers end now, an attempt in flight abandoned, and a whole lease round follows.
   */
  keyRevoked(keyId: string): void;
  /** Stops every delivery (an attempt in flight is abandoned: it will be made again) and lets go of the leases. */
  close(): Promise<void>;
}

/**
 * Delivers every active subscription that this instance holds the lease of, each in its own loop:
 * it follows the log from the subscription's stored position (`followLog`, woken by the store's commits),
 * sends each matching event alone, signed, and stores the new position after a 2xx: one event at a time,
 * write-behind (the next request goes out while the last acknowledged position is stored, coalesced, one
 * write in flight); a batch, before its next one. A failure is retried with back-off from the same event, with the same `webhook-id` and body.
 * Leases (a holder and an expiry in the subscription's row, renewed while delivering) keep each
 * subscription with one instance at a time, across processes on one SQLite file or PostgreSQL instances.
 */
export function startWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  const { subscriptions, clock, logger, delivery } = options;
  const background = options.background ?? createBackgroundWork();
  const holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const stop = new AbortController();
  const attemptSlots = slots(delivery.maxConnections);
  /** Subscriptions whose target the policy refused, told in the log once each (until delivery to it works). */
  const refusalsLogged = new Set<string>();
  const logStorageFault = createRepeatedFaultLog(logger, () => performance.now(), 'webhook delivery pauses while it lasts');
  /** A storage fault is logged once, without a stack, then counted (as requests log it); anything else in full. */
  const logFault = (error: unknown, fields: Record<string, unknown>, message: string) => {
    if (error instanceof StoreUnavailable) logStorageFault(error);
    else logger.warn({ err: error, ...fields }, message);
  };
  /** Each delivered subscription's loop, what ends it when its lease is lost, the replays it began after, and whether to read the secrets again. */
  const workers = new Map<string, Worker>();
  interface Worker {
    done: Promise<void>;
    readonly lost: AbortController;
    replays: number;
    secretsChanged: boolean;
    /** The key that owns the subscription, once its row is read. */
    owner?: string;
  }
  let leasing: Promise<void> | undefined;
  /** What to do once the round in flight ends: nothing, take the free leases, or a whole round. */
  let next: 'none' | 'take' | 'renew' = 'none';

  /**
   * A whole round (`renew`) renews this instance's leases, takes the free and expired ones, and ends the
   * loops of the subscriptions no longer held; `take` (a subscription was created or resumed) only takes
   * free ones. Either starts a loop for each subscription newly held, in a few statements whatever their number.
   */
  const leaseRound = (kind: 'take' | 'renew') => {
    if (stop.signal.aborted) return;
    if (next !== 'renew') next = kind;
    if (leasing) return;
    leasing = (async () => {
      while (next !== 'none' && !stop.signal.aborted) {
        const whole = next === 'renew';
        next = 'none';
        try {
          const now = clock.now();
          const expiresAt = new Date(now.getTime() + delivery.leaseMs);
          const leases = await background.run(LEASE_ROUNDS, () => (whole ? subscriptions.lease(holder, now, expiresAt) : subscriptions.takeFree(holder, now, expiresAt)));
          const held = new Map(leases.map((lease) => [lease.id, lease.replays]));
          if (stop.signal.aborted) return;
          if (whole) for (const [id, worker] of workers) if (!held.has(id)) worker.lost.abort();
          for (const [id, replays] of held) {
            const running = workers.get(id);
            if (running && running.replays !== replays) {
              // Replayed since the loop began: it stops (writing nothing more) and a new one starts from the replayed position.
              running.lost.abort();
              void running.done.then(() => leaseRound('renew'));
              continue;
            }
            if (running) {
              // Another instance may have rotated the secret: read it again before the next request.
              if (whole) running.secretsChanged = true;
              continue;
            }
            const worker: Worker = { lost: new AbortController(), replays, secretsChanged: false, done: Promise.resolve() };
            worker.done = deliverSubscription(id, worker).finally(() => {
              if (workers.get(id) === worker) workers.delete(id);
            });
            workers.set(id, worker);
          }
        } catch (error) {
          // A fault: the next round tries again, and the leases still have time.
          logFault(error, {}, 'webhooks: could not renew or take leases; trying again');
        }
      }
    })().finally(() => {
      leasing = undefined;
    });
  };
  // Renewed a few times per lease; another instance's lease runs out within leaseMs, so it is taken over soon after.
  const leaseTimer = setInterval(() => leaseRound('renew'), Math.max(Math.floor(delivery.leaseMs / 3), 10));
  leaseTimer.unref();
  leaseRound('renew');

  /** One subscription's loop, while this instance holds its lease. */
  async function deliverSubscription(id: string, worker: Worker): Promise<void> {
    const { lost } = worker;
    const signal = AbortSignal.any([stop.signal, lost.signal]);
    try {
      for (;;) {
        try {
          await deliverFromStoredPosition(id, worker, signal);
          return;
        } catch (error) {
          if (signal.aborted) return;
          logFault(error, { webhookId: id }, 'webhooks: delivery paused by a fault; trying again');
          await sleep(FAULT_PAUSE_MS, signal);
        }
      }
    } finally {
      if (!lost.signal.aborted) await background.run(worker.owner ?? id, () => subscriptions.release(id, holder)).catch(() => undefined);
    }
  }

  /** Delivers until the subscription is gone, failing, or the lease is lost; throws on a store fault. */
  async function deliverFromStoredPosition(id: string, worker: Worker, signal: AbortSignal): Promise<void> {
    /** Each read and write of this subscription's delivery, in its owner's turn. */
    const turn = <T>(work: () => Promise<T>) => background.run(worker.owner ?? id, work);
    const found = await turn(() => subscriptions.withSecret(id));
    if (!found || found.subscription.status !== 'active') return;
    let { secrets } = found;
    worker.secretsChanged = false;
    worker.owner = found.subscription.ownerKeyId;
    // This run writes only while no replay came after what it read.
    worker.replays = found.subscription.replays;
    const run: DeliveryRun = { holder, replays: found.subscription.replays };
    let state: WebhookSubscription = found.subscription;
    const from = { after: state.position, ...(state.types ? { types: state.types } : {}), ...(state.petId ? { streamId: petStreamId(state.petId) } : {}) };
    const eventLog = { readLog: (query: Parameters<EventLog['readLog']>[0]) => turn(() => options.eventLog.readLog(query)) };
    const pages = followLog({ eventLog, commits: options.commits }, from, { pageSize: Math.max(PAGE_EVENTS, state.batchSize), idleMs: delivery.leaseMs, signal });
    const positions = positionWriter(id, run, signal, turn);
    const connections = createWebhookConnections();
    /** When the last attempt started: with `maxPerSecond`, the next waits for its turn. */
    let lastAttemptAt = -Infinity;
    const buffer: StoredEvent[] = [];
    /** Reads the next page into the buffer (after waiting for a commit when there is none); false once the follow ends. */
    const readMore = async () => {
      const next = await pages.next();
      if (next.done) return false;
      buffer.push(...next.value);
      return true;
    };
    try {
      for (;;) {
        // The batch in flight: the one fixed before (by this process or one that died), else what is there now.
        let count: number;
        if (state.batchUntil !== null) {
          while ((buffer.at(-1)?.position ?? state.position) < state.batchUntil) if (!(await readMore())) return;
          const beyond = buffer.findIndex((stored) => stored.position > state.batchUntil!);
          count = beyond === -1 ? buffer.length : beyond;
        } else {
          while (buffer.length === 0) if (!(await readMore())) return;
          count = Math.min(buffer.length, state.batchSize);
        }
        const batch = buffer.slice(0, count);
        const last = batch.at(-1)!.position;
        if (positions.lost()) return;
        if (state.batchSize > 1 && state.batchUntil === null && count < state.batchSize) {
          // A partial batch is fixed before the first attempt, so that every attempt, after a crash too, sends
          // the same events. A full one needs no write: the next batchSize events after the stored position
          // are the same ones whenever they are read again (the log only grows at its end).
          if (!(await persisted(() => turn(() => subscriptions.fixBatch(id, run, last)), signal))) return;
          state = { ...state, batchUntil: last };
        }
        // Named by the events it carries, so a replay that sends the same events sends the same id (and a different batch never reuses one).
        const webhookId = state.batchSize > 1 ? `msg_${id}_${batch[0]!.position}_${last}` : `msg_${id}_${last}`;
        const carried = batch.map((stored) => stored.position);
        // Built in the first attempt's turn: its cost counts in the owner's share.
        let body: string | undefined;
        const contentType = state.batchSize > 1 ? BATCH_TYPE : SINGLE_TYPE;
        for (;;) {
          if (state.nextTryAt !== null) await sleep(Date.parse(state.nextTryAt) - clock.now().getTime(), signal);
          if (state.maxPerSecond !== undefined) await sleep(lastAttemptAt + 1000 / state.maxPerSecond - performance.now(), signal);
          if (signal.aborted) return;
          if (worker.secretsChanged) {
            worker.secretsChanged = false;
            const fresh = await turn(() => subscriptions.withSecret(id));
            if (!fresh) return;
            secrets = fresh.secrets;
          }
          await attemptSlots.take();
          let outcome: SendOutcome;
          let sentAt: Date;
          let started: number;
          try {
            if (signal.aborted) return;
            sentAt = clock.now();
            started = performance.now();
            lastAttemptAt = started;
            // The request is made in the owner's turn, which lasts until its answer or SEND_TURN_MS: a quick
            // receiver's request counts whole in the share, a slow one holds nobody's turn for long.
            let sending!: Promise<SendOutcome>;
            await background.send(worker.owner ?? id, () => {
              body ??= state.batchSize > 1 ? cloudEventsJson(batch, options.source()) : cloudEventJson(batch[0]!, options.source());
              const headers = signedHeaders(secretsSigningAt(secrets, sentAt), webhookId, Math.floor(sentAt.getTime() / 1000), body);
              sending = sendWebhook(state.url, { ...headers, 'content-type': contentType }, body, { ...delivery, connections, maxResponseBytes: MAX_RESPONSE_BYTES, signal });
              return Promise.race([sending, sleep(SEND_TURN_MS, signal)]);
            });
            outcome = await sending;
          } finally {
            attemptSlots.give();
          }
          if (signal.aborted) return;
          const now = clock.now();
          const attempt: NewWebhookAttempt = {
            attemptedAt: sentAt.toISOString(), messageId: webhookId, positions: carried, responseStatus: outcome.status,
            durationMs: Math.round(performance.now() - started), error: outcome.ok ? null : outcome.error,
          };
          if (outcome.ok) {
            refusalsLogged.delete(id);
            if (state.batchSize > 1 || state.attempts > 0) {
              // The row's other delivery state (the batch in flight, the failures) is cleared in the same write.
              if (!(await positions.flush()) || !(await persisted(() => turn(() => subscriptions.advance(id, run, last, now, [attempt])), signal))) return;
            } else if (!(await positions.acknowledged(last, now, attempt))) return;
            state = { ...state, position: last, attempts: 0, lastError: null, nextTryAt: null, failingSince: null, batchUntil: null };
            buffer.splice(0, count);
            break;
          }
          if (!(await positions.flush())) return;
          if (outcome.status === 410) {
            // The receiver says the endpoint is gone (Standard Webhooks): no more attempts until resumed.
            if (await persisted(() => turn(() => subscriptions.disable(id, run, outcome.error, [attempt])), signal)) {
              logger.warn({ webhookId: id, lastError: outcome.error }, 'webhooks: the receiver answered 410 Gone; the subscription is disabled until resumed');
            }
            return;
          }
          if (outcome.refusedTarget && !refusalsLogged.has(id)) {
            refusalsLogged.add(id);
            logger.warn({ webhookId: id, lastError: outcome.error }, 'webhooks: delivery refused by the target policy; retrying on schedule');
          }
          const failure = afterFailure(delivery.retry, state, outcome, now);
          if (!(await persisted(() => turn(() => subscriptions.failed(id, run, failure, [attempt])), signal))) return;
          if (failure.nextTryAt === undefined) {
            logger.warn({ webhookId: id, attempts: failure.attempts, lastError: failure.lastError }, 'webhooks: retries ran out; the subscription is failing until resumed');
            return;
          }
          state = { ...state, attempts: failure.attempts, lastError: failure.lastError, nextTryAt: failure.nextTryAt, failingSince: failure.failingSince };
        }
      }
    } finally {
      connections.close();
      await pages.return(undefined);
      await positions.flush();
    }
  }

  /**
   * Stores a subscription's acknowledged positions behind delivery: at most one write in flight, always
   * of the latest acknowledged position, each with the lease checked. A crash loses only positions not yet
   * stored, whose events are sent again (at-least-once); the stored one only ever names an acknowledged event.
   */
  function positionWriter(id: string, run: DeliveryRun, signal: AbortSignal, turn: <T>(work: () => Promise<T>) => Promise<T>) {
    let latest: { position: number; at: Date } | undefined;
    /** The acknowledged attempts not yet in the attempt log: written with the position, the newest WEBHOOK_ATTEMPTS_KEPT at most. */
    let attempts: NewWebhookAttempt[] = [];
    let unstored = 0;
    let writing: Promise<void> | undefined;
    let leaseLost = false;
    const write = (): Promise<void> => {
      if (writing || !latest || leaseLost) return writing ?? Promise.resolve(); // so the loop below always awaits before its end
      writing = (async () => {
        try {
          while (latest && !leaseLost) {
            const { position, at } = latest;
            const recorded = attempts;
            latest = undefined;
            attempts = [];
            unstored = 0;
            // After delivery stops (shutdown) the write is still tried once: the position is not thrown away.
            if (!(await persisted(() => turn(() => subscriptions.advance(id, run, position, at, recorded)), signal)) && !signal.aborted) leaseLost = true;
            if (signal.aborted) break;
            await sleep(POSITION_WRITE_SPACING_MS, signal);
          }
        } finally {
          writing = undefined; // in the same turn as the last look at `latest`: no acknowledgement is left behind
        }
      })();
      return writing;
    };
    return {
      lost: () => leaseLost,
      /** The receiver acknowledged up to `position`; false when the lease was lost. */
      async acknowledged(position: number, at: Date, attempt: NewWebhookAttempt): Promise<boolean> {
        latest = { position, at };
        attempts.push(attempt);
        if (attempts.length > WEBHOOK_ATTEMPTS_KEPT) attempts.shift();
        unstored++;
        const stored = write();
        if (unstored > UNSTORED_ACKNOWLEDGED_MAX) await stored;
        return !leaseLost;
      },
      /** Stores what is acknowledged and waits for it; false when the lease was lost or delivery stopped. */
      async flush(): Promise<boolean> {
        while (writing) await writing;
        if (latest) await write();
        return !leaseLost && !signal.aborted;
      },
    };
  }

  /**
   * A write of the delivery state, tried again on a store fault (SQLite busy with another process's
   * write, a PostgreSQL failover) rather than sending the acknowledged event again. False when the
   * lease is lost or delivery stops.
   */
  async function persisted(write: () => Promise<boolean>, signal: AbortSignal): Promise<boolean> {
    for (let pause = 5; ; pause = Math.min(pause * 2, FAULT_PAUSE_MS)) {
      try {
        return await write();
      } catch (error) {
        if (signal.aborted) return false;
        if (pause === FAULT_PAUSE_MS) logFault(error, {}, 'webhooks: the delivery state could not be stored; trying again');
        await sleep(pause, signal);
      }
      if (signal.aborted) return false;
    }
  }

  return {
    poke: () => leaseRound('take'),
    rotated(id) {
      const worker = workers.get(id);
      if (worker) worker.secretsChanged = true;
    },
    replayed: () => leaseRound('renew'),
    keyRevoked(keyId) {
      for (const worker of workers.values()) if (worker.owner === keyId) worker.lost.abort();
      leaseRound('renew');
    },
    async close() {
      stop.abort();
      clearInterval(leaseTimer);
      await leasing;
      await Promise.all([...workers.values()].map((worker) => worker.done));
    },
  };
}

/** At most `limit` holders at once; the others wait in arrival order. */
function slots(limit: number) {
  let free = limit;
  const waiting: (() => void)[] = [];
  return {
    take(): Promise<void> {
      if (free > 0) {
        free--;
        return Promise.resolve();
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

/** Waits `ms` (nothing when not positive), or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
