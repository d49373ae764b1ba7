import { createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isDecimalDigits } from '../../contract/decimal-integer.ts';
import { resolveSafeTarget, serviceRefusal, UnsafeWebhookTarget } from './safe-target.ts';
import type { TargetPolicy } from './safe-target.ts';

/**
 * The Standard Webhooks headers of one request: `webhook-signature` holds, space-separated, `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body` under each secret (two while a rotation's overlap lasts: either verifies).
 */
export function signedHeaders(secrets: readonly string[], webhookId: string, timestampSeconds: number, body: string): Record<string, string> {
  const signatures = secrets.map((secret) => {
    const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
    return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64')}`;
  });
  return { 'webhook-id': webhookId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}

/** The connections of one subscription's deliveries: its own, so that another's stuck receiver never holds them. */
export interface WebhookConnections {
  agentFor(secure: boolean): HttpAgent;
  /**
   * Drops the kept-alive connection after an attempt that got no answer: the next attempt connects anew.
   * An agent left to clean up after a destroyed request is not relied on (Deno's may keep the dead socket's slot).
   */
  discard(): void;
  close(): void;
}

/** One kept-alive connection for one subscription (it sends one request at a time). */
export function createWebhookConnections(): WebhookConnections {
  const open = () => ({ http: new HttpAgent({ keepAlive: true, maxSockets: 1 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 1 }) });
  let agents = open();
  const close = () => {
    agents.http.destroy();
    agents.https.destroy();
  };
  return {
    agentFor: (secure) => (secure ? agents.https : agents.http),
    discard() {
      close();
      agents = open();
    },
    close,
  };
}

export interface SendOptions extends TargetPolicy {
  readonly connections: WebhookConnections;
  /** The whole attempt, from connecting to the end of the answer. */
  readonly timeoutMs: number;
  /** Bytes of the answer read at most (for the error message); the rest is not waited for. */
  readonly maxResponseBytes: number;
  /** Abandons the attempt (shutdown). */
  readonly signal?: AbortSignal;
}

/**
 * What one attempt came to: a 2xx, or why not, in a line for `lastError`, with the receiver's status (null
 * when it did not answer), when it asked to be called again (`Retry-After` on a 429 or 503), and whether
 * the target policy refused the address.
 */
export type SendOutcome =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly status: number | null; readonly error: string; readonly retryAfter?: Date; readonly refusedTarget?: true };

/** The longest `Retry-After` taken as it is: a receiver cannot park a subscription for longer. */
const MAX_RETRY_AFTER_MS = 7 * 24 * 3_600_000;

const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/;

/** `Retry-After` (RFC 9110: seconds, or an HTTP date) as the time to call again; undefined when absent or unreadable. */
export function retryAfterTime(header: string | undefined, now: Date): Date | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  // delay-seconds is 1*DIGIT: leading zeros allowed, and any length (a huge one is capped below).
  // An HTTP-date, in any of its three forms, begins with the day's name; Date.parse alone would read "1.5" as a date.
  const at = isDecimalDigits(text) ? now.getTime() + Number(text) * 1000 : HTTP_DATE_START.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(at)) return undefined;
  return new Date(Math.min(at, now.getTime() + MAX_RETRY_AFTER_MS));
}


/**
 * POSTs one signed body (`headers` carry its content type) to the subscription's URL, connecting only to an address the target policy
 * allows (resolved now, not when the subscription was made). Never throws: every failure is an outcome.
 */
export async function sendWebhook(url: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendOutcome> {
  const target = new URL(url);
  type Address = { address: string; family: 4 | 6 };
  let addresses: Address[];
  try {
    addresses = await resolveSafeTarget(target, options);
  } catch (error) {
    if (error instanceof UnsafeWebhookTarget) return { ok: false, status: null, error: serviceRefusal(error), refusedTarget: true };
    return { ok: false, status: null, error: (error as Error).message };
  }
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as unknown as (error: null, all: Address[]) => void)(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
  const secure = target.protocol === 'https:';
  const payload = Buffer.from(body);
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const request = (secure ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      agent: options.connections.agentFor(secure),
      lookup: pinned,
      ...(options.signal ? { signal: options.signal } : {}),
      headers: {
        ...headers,
        'content-length': String(payload.length),
        'user-agent': 'petstore-webhooks',
      },
    });
    const timer = setTimeout(() => {
      settle({ ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
      options.connections.discard();
    }, options.timeoutMs);
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error) => settle({ ok: false, status: null, error: `request failed: ${error.message}` }));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        // The status is the acknowledgement: the body is not waited for. A body that did not arrive with
        // the status closes its connection, so the subscription's next request takes a fresh one at once.
        settle({ ok: true, status });
        clearTimeout(timer);
        response.resume();
        setImmediate(() => {
          if (!response.complete) request.destroy();
        });
        return;
      }
      let read = 0;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        if (read < options.maxResponseBytes) chunks.push(chunk.subarray(0, options.maxResponseBytes - read));
        read += chunk.length;
        // Past the cap the answer is not read further: the connection goes, not the service's memory.
        if (read > options.maxResponseBytes) {
          finish();
          response.destroy();
        }
      });
      response.on('end', finish);
      response.on('error', finish);
      function finish() {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, 200).replace(/\s+/g, ' ').trim();
        const header = response.headers['retry-after'];
        const retryAfter = status === 429 || status === 503 ? retryAfterTime(header, new Date()) : undefined;
        settle({ ok: false, status, error: `answered ${status}${text === '' ? '' : `: ${text}`}`, ...(retryAfter ? { retryAfter } : {}) });
      }
    });
    request.end(payload);
  });
}
