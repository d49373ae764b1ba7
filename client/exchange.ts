import { PetStoreAbortError, PetStoreError, PetStoreNetworkError, PetStoreTimeoutError } from './errors.ts';
import type { PetStoreErrorCode } from './types.ts';

export interface ExchangeSettings {
  readonly apiKey: string;
  readonly timeoutMs: number;
}

export interface ExchangeRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly url: URL;
  /** Sent as JSON with this media type. */
  readonly json?: { readonly body: unknown; readonly mediaType: string };
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal: AbortSignal | undefined;
  /** Sees every answer, errors included, before it is judged. */
  readonly observe?: (response: Response) => void;
}

export interface Answer {
  readonly response: Response;
  readonly body: unknown;
}

/**
 * One request and its whole answer, within `timeoutMs`. A 2xx answer comes back with its JSON body;
 * anything else is thrown as one of the client's errors: PetStoreError for a non-2xx answer,
 * PetStoreNetworkError, PetStoreTimeoutError or PetStoreAbortError when no answer arrived.
 */
export async function exchange(settings: ExchangeSettings, request: ExchangeRequest): Promise<Answer> {
  const { signal } = request;
  if (signal?.aborted) throw new PetStoreAbortError('the call was aborted before it was sent', signal.reason);
  const controller = new AbortController();
  // Built before anything is started: a header value fetch refuses (a key with a line break) is the
  // caller's mistake, a TypeError, and must not pass for a network failure.
  const headers = new Headers({ accept: 'application/json', authorization: `Bearer ${settings.apiKey}`, ...request.headers });
  if (request.json) headers.set('content-type', request.json.mediaType);
  const init: RequestInit = { method: request.method, headers, signal: controller.signal };
  if (request.json) init.body = JSON.stringify(request.json.body);
  const prepared = new Request(request.url, init);
  const onAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, settings.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetch(prepared);
    // The timeout covers the body too: an answer that stops half-way is no answer.
    text = await response.text();
  } catch (error) {
    const target = `${request.method} ${request.url.href}`;
    if (signal?.aborted) throw new PetStoreAbortError(`${target} was aborted`, signal.reason);
    if (timedOut) throw new PetStoreTimeoutError(`${target} got no whole answer within ${settings.timeoutMs} ms`, settings.timeoutMs);
    throw new PetStoreNetworkError(`${target} got no answer: ${describe(error)}`, error);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
  request.observe?.(response);
  if (!response.ok) throw errorFrom(response, text);
  // 204 No Content: an answer without a body, as a cancellation's.
  if (response.status === 204) return { response, body: undefined };
  const body = parseJson(text);
  if (body === undefined) throw answerError(response, 'unexpected_response', `the ${response.status} answer is not JSON: ${excerpt(text)}`);
  return { response, body };
}

/** The service's Error body as a PetStoreError; an answer that is not one (a proxy's page) as `unexpected_response`. */
export function errorFrom(response: Response, text: string): PetStoreError {
  const body = parseJson(text) as { code?: unknown; message?: unknown } | undefined;
  if (typeof body?.code === 'string' && typeof body.message === 'string') {
    return answerError(response, body.code as PetStoreErrorCode, body.message);
  }
  return answerError(response, 'unexpected_response', `HTTP ${response.status} ${response.statusText}: ${excerpt(text)}`);
}

export function answerError(response: Response, code: PetStoreErrorCode, message: string): PetStoreError {
  return new PetStoreError({
    code,
    message,
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfterMs: retryAfterMs(response.headers.get('retry-after')),
  });
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : Math.max(0, time - Date.now());
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function excerpt(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

/** fetch's own message is often just "fetch failed"; the cause says what happened. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { message?: unknown; code?: unknown } }).cause;
  const detail = typeof cause?.message === 'string' ? cause.message : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return detail ? `${message} (${detail})` : message;
}
