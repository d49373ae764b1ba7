
export const WEBHOOK_STATUSES = ['active', 'failing', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** A webhook subscription: where to send which events of the log, and how far delivery has come. */
export interface WebhookSubscription {
  readonly id: string;
  /** The API key that made it: only that key sees it. */
  readonly ownerKeyId: string;
  readonly url: string;
  /** Only events of these types; absent: every type. */
  readonly types?: readonly string[];
  /** Only this pet's events. */
  readonly petId?: number;
  readonly createdAt: string;
  /**
   * `active` delivers; `failing` gave up retrying one event, `disabled` was told `410 Gone` by the
   * receiver: both wait to be resumed.
   */
  readonly status: WebhookStatus;
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
  /** Replays asked for so far: a delivery run that began before the last one writes nothing more. */
  readonly replays: number;
  /** Requests a second at most (a batch is one request); absent: as fast as the receiver answers. */
  readonly maxPerSecond?: number;
}

/** A new subscription as the creator asks for it; the store adds id, secret and the start position. */
export interface NewWebhookSubscription {
  readonly ownerKeyId: string;
  readonly url: string;
  readonly types?: readonly string[];
  readonly petId?: number;
  readonly batchSize?: number;
  readonly maxPerSecond?: number;
}

/** A key asked for one subscription more than it may have. */
export class WebhookLimitReached extends Error {
  constructor(readonly max: number) {
    super(`this key has ${max} webhook subscriptions, the most it may have; delete one first`);
    this.name = 'WebhookLimitReached';
  }
}

/** One request to a subscription's URL, as its attempt log shows it. */
export interface WebhookAttempt {
  /** Orders the log: a later attempt has a larger id. */
  readonly id: number;
  readonly attemptedAt: string;
  /** The request's `webhook-id`. */
  readonly messageId: string;
  /** The log positions of the events it carried. */
  readonly positions: readonly number[];
  /** The receiver's HTTP status; null when it did not answer. */
  readonly responseStatus: number | null;
  readonly durationMs: number;
  /** Why it did not count as delivered; null after a 2xx. */
  readonly error: string | null;
}

export type NewWebhookAttempt = Omit<WebhookAttempt, 'id'>;

/** The secrets that sign a subscription's deliveries: the current one, and while a rotation's overlap lasts, the one it replaced. */
export interface SigningSecrets {
  readonly current: string;
  readonly previous?: { readonly secret: string; readonly until: string };
}

/** The secrets that sign a request made at `now`: the previous one only until its overlap ends. */
export function secretsSigningAt(secrets: SigningSecrets, now: Date): string[] {
  const { current, previous } = secrets;
  return previous && Date.parse(previous.until) > now.getTime() ? [current, previous.secret] : [current];
}

/** What a replay request came to. */
export type ReplayOutcome = 'replaying' | 'no_subscription' | 'past_log_end';

/** A subscription this instance holds the lease of, and the replays it had when the lease was looked at. */
export interface HeldLease {
  readonly id: string;
  readonly replays: number;
}

/** Who writes a subscription's delivery state: the lease holder, in the run it began after `replays` replays. */
export interface DeliveryRun {
  readonly holder: string;
  readonly replays: number;
}

/** The outcome of one failed attempt, written with the lease held. */
export interface FailedAttempt {
  readonly attempts: number;
  readonly lastError: string;
  readonly failingSince: string;
  /** Undefined: the retries are over and the subscription is now failing. */
  readonly nextTryAt: string | undefined;
}

/** Subscriptions as their owners and operators manage them (the HTTP routes, the `webhooks` commands), durable. */
export interface WebhookSubscriptions {
  /**
   * Creates it at the current end of the log: it hears of events committed from now on. Throws
   * `WebhookLimitReached` when its owner has `maxPerOwner` already.
   */
  create(input: NewWebhookSubscription, now: Date, maxPerOwner: number): Promise<{ subscription: WebhookSubscription; secret: string }>;
  list(ownerKeyId?: string): Promise<WebhookSubscription[]>;
  /** How many subscriptions there are in each status, every status named. */
  countByStatus(): Promise<Map<WebhookStatus, number>>;
  get(id: string): Promise<WebhookSubscription | undefined>;
  /** Deletes it and its attempt log. */
  delete(id: string): Promise<boolean>;
  /** A new current secret; the one it replaces keeps signing for `overlapMs`. Undefined when there is no such subscription. */
  rotateSecret(id: string, now: Date, overlapMs: number): Promise<string | undefined>;
  /**
   * Delivery starts again after log position `after` (active, fresh retries, one more replay counted, so the
   * run delivering it now writes nothing more and the lease holder starts a new one there). Refused past the log's end.
   */
  replay(id: string, after: number): Promise<ReplayOutcome>;
  /** The newest attempts first, those older than the attempt with id `before` when given; only those still kept (`now` decides their age). */
  attempts(id: string, page: { limit: number; before?: number }, now: Date): Promise<WebhookAttempt[]>;
  /** `failing` or `disabled` back to `active`, retrying the event it stopped at; false when there is no such subscription. */
  resume(id: string): Promise<boolean>;
}

/**
 * What the dispatcher reads and writes of the subscriptions it delivers, durable. Every delivery write
 * names the instance holding the subscription's lease and does nothing without it, so only one instance
 * at a time moves a subscription on.
 */
export interface WebhookDeliveryState {
  /** The subscription and its signing secrets, for the instance that delivers it. */
  withSecret(id: string): Promise<{ subscription: WebhookSubscription; secrets: SigningSecrets } | undefined>;
  /**
   * Renews every lease `holder` has and takes those of the active subscriptions nobody holds or whose
   * lease expired before `now`, all until `expiresAt`, in a few statements whatever their number; answers
   * the active subscriptions `holder` holds now.
   */
  lease(holder: string, now: Date, expiresAt: Date): Promise<HeldLease[]>;
  /** Takes only the leases of active subscriptions nobody holds or whose lease expired; answers those it took. */
  takeFree(holder: string, now: Date, expiresAt: Date): Promise<HeldLease[]>;
  release(id: string, holder: string): Promise<void>;
  /** Fixes the batch in flight as the events up to `until`, before its first attempt; false when the lease or the run was lost. */
  fixBatch(id: string, run: DeliveryRun, until: number): Promise<boolean>;
  /**
   * The receiver acknowledged everything up to `position`; false when the lease or the run (a replay) was
   * lost. `attempts` go into the attempt log in the same write, either way (they were made).
   */
  advance(id: string, run: DeliveryRun, position: number, now: Date, attempts?: readonly NewWebhookAttempt[]): Promise<boolean>;
  /** Records a failed attempt (and `attempts` into the log, as `advance`); false when the lease or the run was lost. */
  failed(id: string, run: DeliveryRun, attempt: FailedAttempt, attempts?: readonly NewWebhookAttempt[]): Promise<boolean>;
  /** The receiver answered `410 Gone`: `disabled` until resumed, the lease let go (and `attempts` logged, as `advance`); false when the lease or the run was lost. */
  disable(id: string, run: DeliveryRun, lastError: string, attempts?: readonly NewWebhookAttempt[]): Promise<boolean>;
}

/** How failed deliveries are retried. */
export interface RetryPolicy {
  /**
   * The wait before each retry at one event: the first after the first failed attempt, and so on. Once
   * the last retry fails too, the subscription is marked failing.
   */
  readonly scheduleMs: readonly number[];
}

/**
 * The wait before attempt `attempts + 1`, or undefined once the schedule is spent: the scheduled wait and
 * up to a tenth more (jitter, so that receivers coming back are not hit by every sender at once, and
 * never shorter than the schedule says).
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number | undefined {
  const scheduled = policy.scheduleMs[attempts - 1];
  return scheduled === undefined ? undefined : Math.round(scheduled * (1 + random() / 10));
}

/** A failed attempt as the receiver answered it: `retryAfter`, the time it asked not to be called before. */
export interface AttemptFailure {
  readonly error: string;
  readonly retryAfter?: Date | undefined;
}

/** What a failed attempt means: the next try (never before the receiver's `Retry-After`), or the end of retrying once the schedule is spent. */
export function afterFailure(
  policy: RetryPolicy,
  previous: Pick<WebhookSubscription, 'attempts' | 'failingSince'>,
  failure: AttemptFailure,
  now: Date,
  random?: () => number,
): FailedAttempt {
  const attempts = previous.attempts + 1;
  const failingSince = previous.failingSince ?? now.toISOString();
  const delay = retryDelayMs(policy, attempts, random);
  const next = delay === undefined ? undefined : Math.max(now.getTime() + delay, failure.retryAfter?.getTime() ?? 0);
  return { attempts, lastError: failure.error, failingSince, nextTryAt: next === undefined ? undefined : new Date(next).toISOString() };
}
