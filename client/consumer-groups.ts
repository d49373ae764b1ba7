import { PetStoreError } from './errors.ts';
import { exchange } from './exchange.ts';
import type { ExchangeSettings } from './exchange.ts';
import { wait } from './retry.ts';
import type { Acked, Claim, ConsumerGroup, Extended, Nacked, NewConsumerGroup } from './types.ts';

export interface ClaimOptions {
  /** Events to claim at most, 1 to 1000; the service's default is 10. */
  readonly max?: number;
  /** When nothing can be handed out now, how long the service waits for new events (0 to 30 000 ms); default 0. */
  readonly waitMs?: number;
  /** Leases to ack first, in the same request (the last batch's); acked even when the claim is refused at a cap. */
  readonly acks?: readonly string[];
  readonly signal?: AbortSignal;
}

export interface NackOptions {
  /** Hand the events out again no sooner than this. */
  readonly retryAfterMs?: number;
  /** Park them at once instead. */
  readonly park?: boolean;
  /** Hand them back untried, at once, without counting the delivery (not with `park` or `retryAfterMs`). */
  readonly release?: boolean;
  readonly signal?: AbortSignal;
}

export interface ConsumeOptions {
  /** This worker's name in the group; default a random one. */
  readonly consumer?: string;
  /** Events claimed at a time, 1 to 1000; default 10. */
  readonly max?: number;
  /** How long each claim waits for new events; default 10 000 ms. */
  readonly waitMs?: number;
  /** A failed event is handed out again after this long; default 1 000 ms. */
  readonly retryAfterMs?: number;
  /** Stops the loop, between events: the events claimed and not yet handled are handed back at once, untried. */
  readonly signal?: AbortSignal;
}

/** Consumer groups (experimental in the service): competing consumers of the log, each event acked by one. */
export interface ConsumerGroupCalls {
  /** Creates the group, or finds it with the same settings (409 `group_exists` with others). */
  createConsumerGroup(group: string, settings?: NewConsumerGroup, options?: { signal?: AbortSignal }): Promise<ConsumerGroup>;
  /** Where the group stands: checkpoint, head, lag, in flight, parked, consumers. */
  consumerGroup(group: string, options?: { signal?: AbortSignal }): Promise<ConsumerGroup>;
  /** Claims events under leases; past the in-flight cap a PetStoreError `too_many_in_flight` with `retryAfterMs`. */
  claim(group: string, consumer: string, options?: ClaimOptions): Promise<Claim[]>;
  ack(group: string, leases: readonly string[], options?: { signal?: AbortSignal }): Promise<Acked>;
  nack(group: string, leases: readonly string[], options?: NackOptions): Promise<Nacked>;
  extend(group: string, leases: readonly string[], options?: { signal?: AbortSignal }): Promise<Extended>;
  /**
   * Claims events and calls `handler` with each, one at a time in the order claimed: acks it when the
   * handler returns, nacks it (handed out again after `retryAfterMs`) when it throws. Runs until `signal`
   * aborts. At least once: a handler may see an event again, so make it idempotent by the event's `id`.
   */
  consume(group: string, handler: (event: Claim['event'], claim: Claim) => unknown, options?: ConsumeOptions): Promise<void>;
}

export function consumerGroupCalls(settings: ExchangeSettings, url: (path: string) => URL): ConsumerGroupCalls {
  const path = (group: string, rest = '') => url(`/consumer-groups/${encodeURIComponent(group)}${rest}`);
  const post = async (target: URL, body: unknown, signal: AbortSignal | undefined, timeoutMs = settings.timeoutMs) =>
    (await exchange({ ...settings, timeoutMs }, { method: 'POST', url: target, json: { body, mediaType: 'application/json' }, signal })).body;

  const calls: ConsumerGroupCalls = {
    async createConsumerGroup(group, newGroup = {}, options = {}) {
      const answer = await exchange(settings, { method: 'PUT', url: path(group), json: { body: newGroup, mediaType: 'application/json' }, signal: options.signal });
      return answer.body as ConsumerGroup;
    },
    async consumerGroup(group, options = {}) {
      return (await exchange(settings, { method: 'GET', url: path(group), signal: options.signal })).body as ConsumerGroup;
    },
    async claim(group, consumer, options = {}) {
      const body = {
        consumer, ...(options.max === undefined ? {} : { max: options.max }), ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
        ...(options.acks && options.acks.length > 0 ? { acks: options.acks } : {}),
      };
      // The answer may take the wait itself on top of the usual time.
      const answer = (await post(path(group, '/claims'), body, options.signal, settings.timeoutMs + (options.waitMs ?? 0))) as { claims: Claim[] };
      return answer.claims;
    },
    async ack(group, leases, options = {}) {
      return (await post(path(group, '/acks'), { leases }, options.signal)) as Acked;
    },
    async nack(group, leases, options = {}) {
      const body = {
        leases, ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }), ...(options.park ? { park: true } : {}),
        ...(options.release ? { release: true } : {}),
      };
      return (await post(path(group, '/nacks'), body, options.signal)) as Nacked;
    },
    async extend(group, leases, options = {}) {
      return (await post(path(group, '/extend'), { leases }, options.signal)) as Extended;
    },
    async consume(group, handler, options = {}) {
      const consumer = options.consumer ?? `consumer-${crypto.randomUUID().slice(0, 8)}`;
      const { signal } = options;
      /** Handled events' leases, acked with the next claim: one request a batch. */
      let handled: string[] = [];
      /** Acks what was handled before the loop ends. */
      const flush = async () => {
        if (handled.length > 0) await calls.ack(group, handled).catch(() => undefined);
      };
      while (!signal?.aborted) {
        let claims: Claim[];
        try {
          claims = await calls.claim(group, consumer, { max: options.max ?? 10, waitMs: options.waitMs ?? 10_000, acks: handled, ...(signal ? { signal } : {}) });
          handled = [];
        } catch (error) {
          if (signal?.aborted) return flush();
          // At the in-flight cap: wait for a lease to free up, as the service says. The acks went with the
          // refused claim.
          if (error instanceof PetStoreError && error.code === 'too_many_in_flight') {
            handled = [];
            await wait(error.retryAfterMs ?? 1000, signal).catch(() => undefined);
            continue;
          }
          await flush();
          throw error;
        }
        for (const [index, claim] of claims.entries()) {
          if (signal?.aborted) {
            // Another worker takes the rest at once, rather than after their leases expire.
            await calls.nack(group, claims.slice(index).map((left) => left.lease), { release: true }).catch(() => undefined);
            return flush();
          }
          let succeeded: boolean;
          try {
            await handler(claim.event, claim);
            succeeded = true;
          } catch {
            succeeded = false;
          }
          if (succeeded) handled.push(claim.lease);
          else await calls.nack(group, [claim.lease], { retryAfterMs: options.retryAfterMs ?? 1000 });
        }
      }
      return flush();
    },
  };
  return calls;
}
