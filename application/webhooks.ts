import type { PetEvent } from '../domain/index.ts';

/** A webhook subscription: where to send which events of the log, and how far delivery has come. */
export interface WebhookSubscription {
  readonly id: string;
  /** The API key that made it: only that key sees it. */
  readonly ownerKeyId: string;
  readonly url: string;
  /** Only events of these types; absent: every type. */
  readonly types?: readonly PetEvent['type'][];
  /** Only this pet's events. */
  readonly petId?: number;
  readonly createdAt: string;
  /** `active` delivers; `failing` gave up retrying one event and waits to be resumed. */
  readonly status: 'active' | 'failing';
  /** Delivered up to here: the last position the receiver acknowledged (or skipped past by the filters). */
  readonly position: number;
  /** Attempts at the next event so far without a 2xx. */
  readonly attempts: number;
  readonly lastError: string | null;
  /** When the next attempt is due, while retrying. */
  readonly nextTryAt: string | null;
  /** When the first failed attempt at the next event was made: the retries stop a bounded time after it. */
  readonly failingSince: string | null;
  readonly lastDeliveredAt: string | null;
  /** Events per request at most; 1: each event alone (its body one CloudEvent), else an array. */
  readonly batchSize: number;
  /** The last position of the batch in flight, fixed before its first attempt; null when none is. */
  readonly batchUntil: number | null;
}

/** A new subscription as the creator asks for it; the store adds id, secret and the start position. */
export interface NewWebhookSubscription {
  readonly ownerKeyId: string;
  readonly url: string;
  readonly types?: readonly PetEvent['type'][];
  readonly petId?: number;
  readonly batchSize?: number;
}

/** A key asked for one subscription more than it may have. */
export class WebhookLimitReached extends Error {
  constructor(readonly max: number) {
    super(`this key has ${max} webhook subscriptions, the most it may have; delete one first`);
    this.name = 'WebhookLimitReached';
  }
}

/** The outcome of one failed attempt, written with the lease held. */
export interface FailedAttempt {
  readonly attempts: number;
  readonly lastError: string;
  readonly failingSince: string;
  /** Undefined: the retries are over and the subscription is now failing. */
  readonly nextTryAt: string | undefined;
}

/**
 * Subscriptions and their delivery state, durable. Every delivery write names the instance holding the
 * subscription's lease and does nothing without it, so only one instance at a time moves a subscription on.
 */
export interface WebhookSubscriptions {
  /**
   * Creates it at the current end of the log: it hears of events committed from now on. Throws
   * `WebhookLimitReached` when its owner has `maxPerOwner` already.
   */
  create(input: NewWebhookSubscription, now: Date, maxPerOwner: number): Promise<{ subscription: WebhookSubscription; secret: string }>;
  list(ownerKeyId?: string): Promise<WebhookSubscription[]>;
  get(id: string): Promise<WebhookSubscription | undefined>;
  /** The subscription and its secret, for the instance that delivers it. */
  withSecret(id: string): Promise<{ subscription: WebhookSubscription; secret: string } | undefined>;
  delete(id: string): Promise<boolean>;
  /** `failing` back to `active`, retrying the event it stopped at; false when there is no such subscription. */
  resume(id: string): Promise<boolean>;
  /**
   * Renews every lease `holder` has and takes those of the active subscriptions nobody holds or whose
   * lease expired before `now`, all until `expiresAt`, in a few statements whatever their number; answers
   * the ids of the active subscriptions `holder` holds now.
   */
  lease(holder: string, now: Date, expiresAt: Date): Promise<string[]>;
  /** Takes only the leases of active subscriptions nobody holds or whose lease expired; answers the ids it took. */
  takeFree(holder: string, now: Date, expiresAt: Date): Promise<string[]>;
  release(id: string, holder: string): Promise<void>;
  /** Fixes the batch in flight as the events up to `until`, before its first attempt; false when the lease was lost. */
  fixBatch(id: string, holder: string, until: number): Promise<boolean>;
  /** The receiver acknowledged everything up to `position`; false when the lease was lost. */
  advance(id: string, holder: string, position: number, now: Date): Promise<boolean>;
  /** Records a failed attempt; false when the lease was lost. */
  failed(id: string, holder: string, attempt: FailedAttempt): Promise<boolean>;
}

/** How failed deliveries are retried. */
export interface RetryPolicy {
  /** The first retry comes after about this long; each further one waits twice as long. */
  readonly baseMs: number;
  /** The longest wait between two attempts. */
  readonly capMs: number;
  /** After failing this long at one event, the subscription is marked failing. */
  readonly giveUpAfterMs: number;
}

/**
 * The wait before attempt `attempts + 1`: exponential from `baseMs` toward `capMs`, with jitter (between
 * half and the whole of it) so that receivers coming back are not hit by every sender at once.
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
  return Math.round(exponential * (0.5 + random() / 2));
}

/** What a failed attempt means: the next try, or the end of retrying when the bounded time has run out. */
export function afterFailure(
  policy: RetryPolicy,
  previous: Pick<WebhookSubscription, 'attempts' | 'failingSince'>,
  error: string,
  now: Date,
  random?: () => number,
): FailedAttempt {
  const attempts = previous.attempts + 1;
  const failingSince = previous.failingSince ?? now.toISOString();
  const next = now.getTime() + retryDelayMs(policy, attempts, random);
  const giveUpAt = Date.parse(failingSince) + policy.giveUpAfterMs;
  return { attempts, lastError: error, failingSince, nextTryAt: next > giveUpAt ? undefined : new Date(next).toISOString() };
}
