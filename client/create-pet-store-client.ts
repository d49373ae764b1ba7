import { readDeprecationNotice } from './deprecation-notice.ts';
import type { DeprecationNotice } from './deprecation-notice.ts';
import { answerError, exchange } from './exchange.ts';
import type { Answer, ExchangeRequest, ExchangeSettings } from './exchange.ts';
import { linkTarget } from './link-header.ts';
import { DEFAULT_RETRY_POLICY, withRetries } from './retry.ts';
import type { RetryPolicy } from './retry.ts';
import { followEvents } from './event-stream.ts';
import { consumerGroupCalls } from './consumer-groups.ts';
import type { ConsumerGroupCalls } from './consumer-groups.ts';
import { storeOrderCalls } from './store-orders.ts';
import type { StoreOrderCalls } from './store-orders.ts';
import type { CloudEvent, CloudEventType, NewPet, Pet, PetStatus, Webhook, WebhookAttempt, WebhookSecretRotated } from './types.ts';

export interface PetStoreClientOptions {
  /** A deployment's base address including `/v1`, e.g. `https://api.example.com/v1`. */
  readonly baseUrl: string;
  /**
   * Sent as `Authorization: Bearer <apiKey>` on every call. `undefined` is accepted so that an
   * environment variable (typed `string | undefined`) type-checks as it is; a missing key throws at once.
   */
  readonly apiKey: string | undefined;
  /** How long one attempt may take to get its whole answer; default 10 000 ms. */
  readonly timeoutMs?: number;
  /** Back-off for the calls that retry (createPet, getPet, listPets, pets); default 4 attempts, 100 ms doubling, at most 2 000 ms a wait. */
  readonly retry?: Partial<RetryPolicy>;
  /** Told once per client when the service marks an operation deprecated; default `console.warn(notice.message)`. */
  readonly onDeprecation?: (notice: DeprecationNotice) => void;
  /** A log position this client's reads must include from the start (another client's `position`, say); default 0. */
  readonly minPosition?: number;
}

export interface CallOptions {
  /** Aborts the call, retries and waits included. */
  readonly signal?: AbortSignal;
  /**
   * The caller's W3C trace context (`00-<trace id>-<parent id>-<flags>`), sent as `traceparent` with
   * every request of the call, so that the service's spans join the caller's trace.
   */
  readonly traceparent?: string;
  /** Sent as `tracestate` alongside `traceparent`. */
  readonly tracestate?: string;
}

export interface ListPetsQuery {
  readonly status?: PetStatus;
  /** 1 to 100 pets a page; the service's default is 20. */
  readonly limit?: number;
  /** Only pets with a larger id: the last id of the page before. */
  readonly after?: number;
}

export interface CreatePetOptions extends CallOptions {
  /** Makes the creation retry-safe; a new UUID when not given. Reuse it only to repeat the same creation. */
  readonly idempotencyKey?: string;
}

export interface ChangePetStatusOptions extends CallOptions {
  /** Apply only while the pet is still at this version: an `etag` from getPet or changePetStatus, or `*`. */
  readonly ifMatch?: string;
}

export interface EventsQuery {
  /** Only events after this position (a CloudEvent's `id`); default 0, from the start. */
  readonly after?: number;
  /** Only events of these types. */
  readonly types?: readonly CloudEventType[];
  /** Only this pet's events. */
  readonly petId?: number;
}

export interface WebhookAttemptsQuery {
  /** 1 to 100 attempts a page; the service's default is 20. */
  readonly limit?: number;
  /** Only attempts older than this one: the last `id` of the page before. */
  readonly before?: number;
}

/** A pet and its entity tag (its version), for `ifMatch`. */
export interface VersionedPet {
  readonly pet: Pet;
  readonly etag: string;
}

export interface PetStoreClient extends ConsumerGroupCalls, StoreOrderCalls {
  /** One page of pets in ascending id order. */
  listPets(query?: ListPetsQuery, options?: CallOptions): Promise<Pet[]>;
  /** Every pet (with the status, if given), page after page, following each answer's `Link: rel="next"`. */
  pets(query?: { readonly status?: PetStatus; readonly limit?: number }, options?: CallOptions): AsyncGenerator<Pet, void, undefined>;
  /** Adds a pet. Retried on network failures, timeouts and 503 under one Idempotency-Key, so it never adds two. */
  createPet(newPet: NewPet, options?: CreatePetOptions): Promise<Pet>;
  /** Deprecated by the service: warns once per client through `onDeprecation`. */
  getPet(id: number, options?: CallOptions): Promise<VersionedPet>;
  /** Experimental in the service. Never retried: a change whose answer was lost would come back as 412 with `ifMatch`. */
  changePetStatus(id: number, status: PetStatus, options?: ChangePetStatusOptions): Promise<VersionedPet>;
  /**
   * Experimental in the service. The log's events in position order, then each new one as it is
   * committed, for as long as the caller iterates (stop with `break` or `signal`). A broken stream is
   * opened again after the last event seen, so none is missed or repeated.
   */
  events(query?: EventsQuery, options?: CallOptions): AsyncGenerator<CloudEvent, never, undefined>;
  /** Experimental in the service. Every event of one pet, oldest first. */
  petHistory(id: number, options?: CallOptions): Promise<CloudEvent[]>;
  /** Experimental in the service. One page of a webhook subscription's recent attempts, newest first. */
  webhookAttempts(id: string, query?: WebhookAttemptsQuery, options?: CallOptions): Promise<WebhookAttempt[]>;
  /**
   * Experimental in the service. Delivers every matching event after log position `after` again, with the
   * same webhook-ids and bodies, then carries on live. Never retried (a repeat would restart the replay).
   */
  replayWebhook(id: string, after: number, options?: CallOptions): Promise<Webhook>;
  /**
   * Experimental in the service. A new signing secret, shown only in this answer; the old one keeps signing
   * beside it until `previousSecretExpiresAt`. Never retried: a repeat would replace the new secret too.
   */
  rotateWebhookSecret(id: string, options?: CallOptions): Promise<WebhookSecretRotated>;
  /**
   * Experimental in the service. A `failing` subscription (its retries ran out) or a `disabled` one (its
   * receiver answered 410 Gone) becomes `active` and delivery starts again at the event it stopped at.
   */
  resumeWebhook(id: string, options?: CallOptions): Promise<Webhook>;
  /**
   * The highest log position of any write this client saw answered (`Petstore-Position`). Every read
   * sends it (`Petstore-Min-Position`), so a read never misses a write this client saw acknowledged,
   * whichever instance answers it.
   */
  readonly position: number;
}

const POSITION_HEADER = 'petstore-position';
const MIN_POSITION_HEADER = 'petstore-min-position';

// The interface's largest page: walking everything takes the fewest round trips.
const WALK_PAGE_SIZE = 100;

/** A client for one deployment. It uses only web-standard globals (fetch, URL, Headers, AbortController, timers, crypto.randomUUID), so it runs on Node, Deno and in browsers. */
export function createPetStoreClient(options: PetStoreClientOptions): PetStoreClient {
  // Checked here: without it every call would come back as 401, which reads as a wrong key rather than none.
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') {
    throw new TypeError(`createPetStoreClient: apiKey is missing (got ${JSON.stringify(options.apiKey) ?? 'undefined'}): pass the API key the service accepts`);
  }
  // Parsed once, so a malformed baseUrl fails here rather than at the first call.
  const base = new URL(options.baseUrl).href.replace(/\/+$/, '');
  const settings: ExchangeSettings = { apiKey: options.apiKey, timeoutMs: options.timeoutMs ?? 10_000 };
  const retry: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const onDeprecation = options.onDeprecation ?? ((notice: DeprecationNotice) => console.warn(notice.message));
  let deprecationTold = false;
  let position = options.minPosition ?? 0;
  const notePosition = ({ response }: Answer) => {
    const written = Number(response.headers.get(POSITION_HEADER) ?? 0);
    if (Number.isSafeInteger(written) && written > position) position = written;
  };
  /** A read's headers: the position it must include, and the caller's trace context. */
  const readHeaders = (callOptions: CallOptions): Record<string, string> => ({
    ...(position > 0 ? { [MIN_POSITION_HEADER]: String(position) } : {}),
    ...traceHeaders(callOptions),
  });

  const url = (path: string, query: Record<string, string | number | undefined> = {}): URL => {
    const target = new URL(`${base}${path}`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) target.searchParams.set(name, String(value));
    return target;
  };
  const petUrl = (id: number) => url(`/pets/${encodeURIComponent(String(id))}`);
  const retried = (request: ExchangeRequest): Promise<Answer> => withRetries(retry, request.signal, () => exchange(settings, request));
  const tellDeprecation = (operation: string) => (response: Response) => {
    if (deprecationTold) return;
    const notice = readDeprecationNotice(operation, response);
    if (notice === undefined) return;
    deprecationTold = true;
    onDeprecation(notice);
  };

  /**
   * The next page's address. A link on our own base is followed as it is; one elsewhere (the
   * service's public address seen through a proxy) keeps its query on our base, so the key is
   * never sent to another origin.
   */
  const nextPage = (response: Response): URL | undefined => {
    const next = linkTarget(response.headers.get('link'), 'next', response.url || base);
    if (next === undefined || next.href.startsWith(`${base}/`)) return next;
    const rebased = url('/pets');
    rebased.search = next.search;
    return rebased;
  };

  return {
    ...consumerGroupCalls(settings, (path) => url(path)),
    ...storeOrderCalls({ settings, url, retried, readHeaders, traceHeaders, notePosition }),

    async listPets(query = {}, options = {}) {
      const { body } = await retried({ method: 'GET', url: url('/pets', { ...query }), headers: readHeaders(options), signal: options.signal });
      return body as Pet[];
    },

    async *pets(query = {}, options = {}) {
      let next: URL | undefined = url('/pets', { status: query.status, limit: query.limit ?? WALK_PAGE_SIZE });
      while (next !== undefined) {
        const { response, body }: Answer = await retried({ method: 'GET', url: next, headers: readHeaders(options), signal: options.signal });
        yield* body as Pet[];
        next = nextPage(response);
      }
    },

    async createPet(newPet, options = {}) {
      const { idempotencyKey = crypto.randomUUID(), signal } = options;
      const answer = await retried({
        method: 'POST',
        url: url('/pets'),
        json: { body: newPet, mediaType: 'application/json' },
        headers: { 'idempotency-key': idempotencyKey, ...traceHeaders(options) },
        signal,
      });
      notePosition(answer);
      return answer.body as Pet;
    },

    async getPet(id, options = {}) {
      return versioned(await retried({ method: 'GET', url: petUrl(id), headers: readHeaders(options), signal: options.signal, observe: tellDeprecation('getPet') }));
    },

    events(query = {}, options = {}) {
      return followEvents({
        apiKey: settings.apiKey,
        url: (after) => url('/events', { after, type: query.types?.join(','), petId: query.petId }),
        after: query.after ?? 0,
        retry,
        headers: traceHeaders(options),
        signal: options.signal,
      });
    },

    async petHistory(id, options = {}) {
      const { body } = await retried({ method: 'GET', url: url(`/pets/${encodeURIComponent(String(id))}/events`), headers: traceHeaders(options), signal: options.signal });
      return body as CloudEvent[];
    },

    async webhookAttempts(id, query = {}, options = {}) {
      const { body } = await retried({ method: 'GET', url: url(`${webhookPath(id)}/attempts`, { ...query }), headers: traceHeaders(options), signal: options.signal });
      return body as WebhookAttempt[];
    },

    async replayWebhook(id, after, options = {}) {
      const answer = await exchange(settings, {
        method: 'POST', url: url(`${webhookPath(id)}/replay`), json: { body: { after }, mediaType: 'application/json' }, headers: traceHeaders(options), signal: options.signal,
      });
      return answer.body as Webhook;
    },

    async rotateWebhookSecret(id, options = {}) {
      const answer = await exchange(settings, { method: 'POST', url: url(`${webhookPath(id)}/rotate-secret`), headers: traceHeaders(options), signal: options.signal });
      return answer.body as WebhookSecretRotated;
    },

    async resumeWebhook(id, options = {}) {
      const answer = await exchange(settings, { method: 'POST', url: url(`${webhookPath(id)}/resume`), headers: traceHeaders(options), signal: options.signal });
      return answer.body as Webhook;
    },

    async changePetStatus(id, status, options = {}) {
      const { ifMatch, signal } = options;
      const answer = await exchange(settings, {
        method: 'PATCH',
        url: petUrl(id),
        json: { body: { status }, mediaType: 'application/merge-patch+json' },
        headers: { ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }), ...traceHeaders(options) },
        signal,
      });
      notePosition(answer);
      return versioned(answer);
    },

    get position() {
      return position;
    },
  };
}

// version-trace id-parent id-flags, lower-case hex (W3C Trace Context, level 1); a later version may add fields.
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-[^\s]*)?$/;

/** The call's trace context as headers; a malformed `traceparent` is the caller's mistake, a TypeError, not a silently new trace. */
function traceHeaders({ traceparent, tracestate }: CallOptions): Record<string, string> {
  if (traceparent === undefined) return {};
  if (!TRACEPARENT.test(traceparent)) throw new TypeError(`traceparent is malformed: ${JSON.stringify(traceparent)} (expected 00-<32 hex>-<16 hex>-<2 hex>)`);
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

function webhookPath(id: string): string {
  return `/webhooks/${encodeURIComponent(id)}`;
}

function versioned({ response, body }: Answer): VersionedPet {
  const etag = response.headers.get('etag');
  if (etag === null) throw answerError(response, 'unexpected_response', 'the answer carries no ETag');
  return { pet: body as Pet, etag };
}
