import type { Context, Next } from 'koa';
import type { ApiKeyVerifier, KeyCheck } from './key-verifier.ts';
import { HttpProblem } from '../http/errors.ts';

// RFC 6750 b64token after a case-insensitive scheme name (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Lets a request through only with a live key; records which key (its id, never the key) on `ctx.state`. */
export function requireApiKey(verifier: ApiKeyVerifier) {
  // Not an async function: a remembered key is checked without a promise of its own.
  return function requireApiKeyMiddleware(ctx: Context, next: Next): Promise<void> {
    const header = ctx.get('authorization');
    if (!header) {
      throw new HttpProblem('unauthorized', 'an API key is required: send Authorization: Bearer <API_KEY>', { 'WWW-Authenticate': 'Bearer' });
    }
    if (!/^bearer(\s|$)/i.test(header)) {
      // Another scheme is no bearer credential at all: a bare challenge (RFC 6750 §3.1).
      throw new HttpProblem('unauthorized', 'an API key is required: send Authorization: Bearer <API_KEY>', { 'WWW-Authenticate': 'Bearer' });
    }
    const key = bearerKey(header);
    const check = key === undefined ? { ok: false as const } : verifier.verify(key);
    if (check instanceof Promise) return check.then((checked) => admit(ctx, checked, next));
    return admit(ctx, check, next);
  };
}

/** The key of a well-formed `Bearer` credential; undefined for anything else. */
export function bearerKey(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

function admit(ctx: Context, check: KeyCheck, next: Next): Promise<void> {
  if (!check.ok) {
    throw new HttpProblem('unauthorized', 'the API key is not valid', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  }
  ctx.state.apiKeyId = check.keyId;
  return next();
}
