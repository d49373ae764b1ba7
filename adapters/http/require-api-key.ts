import type { Context, Next } from 'koa';
import type { ApiKeyVerifier } from '../api-keys.ts';
import { HttpProblem } from './errors.ts';

// RFC 6750 b64token after a case-insensitive scheme name (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Lets a request through only with a live key; records which key (its id, never the key) on `ctx.state`. */
export function requireApiKey(verifier: ApiKeyVerifier) {
  return async function requireApiKeyMiddleware(ctx: Context, next: Next): Promise<void> {
    const header = ctx.get('authorization');
    if (!header) {
      throw new HttpProblem('unauthorized', 'an API key is required: send Authorization: Bearer <API_KEY>', { 'WWW-Authenticate': 'Bearer' });
    }
    if (!/^bearer(\s|$)/i.test(header)) {
      // Another scheme is no bearer credential at all: a bare challenge (RFC 6750 §3.1).
      throw new HttpProblem('unauthorized', 'an API key is required: send Authorization: Bearer <API_KEY>', { 'WWW-Authenticate': 'Bearer' });
    }
    const key = BEARER.exec(header)?.[1];
    const check = key === undefined ? { ok: false as const } : await verifier.verify(key);
    if (!check.ok) {
      throw new HttpProblem('unauthorized', 'the API key is not valid', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    }
    ctx.state.apiKeyId = check.keyId;
    await next();
  };
}
