import type { IncomingMessage } from 'node:http';
import type { ApiKeyVerifier, KeyCheck } from '../../api-keys/key-verifier.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import type { Guard } from './guards.ts';
import type { Access, RequestState } from '../pipeline/request-state.ts';

// RFC 6750 b64token after a case-insensitive scheme name (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The request's key verdict, decided on first use and then read from its state. */
export type KeyCheckOf = (state: RequestState, request: IncomingMessage) => Access | Promise<Access>;

/**
 * The one reading of a request's `Authorization`: exactly one field, a `Bearer` credential, a live key.
 * `onRefused` may turn a refusal into another answer (a client that keeps sending wrong keys is slowed down).
 */
export function createKeyCheck(verifier: ApiKeyVerifier, onRefused?: (request: IncomingMessage, refusal: HttpProblem) => HttpProblem): KeyCheckOf {
  const refuse = (request: IncomingMessage, refusal: HttpProblem) => (onRefused ? onRefused(request, refusal) : refusal);
  // A live key's check is its own verdict: nothing is built on the hot path.
  const admit = (request: IncomingMessage, check: KeyCheck): Access => (check.ok ? check : refuse(request, invalidKey()));
  const decide = (state: RequestState, request: IncomingMessage): Access | Promise<Access> => {
    if (state.authorizations > 1) return new HttpProblem('invalid_header', 'a request carries one Authorization header, not several');
    const header = request.headers.authorization;
    const key = header === undefined ? undefined : bearerKey(header);
    if (key === undefined) {
      // Another scheme is no bearer credential at all: a bare challenge (RFC 6750 §3.1).
      return refuse(request, header !== undefined && /^bearer(\s|$)/i.test(header) ? invalidKey() : missingKey());
    }
    const check = verifier.verify(key);
    return check instanceof Promise ? check.then((checked) => admit(request, checked)) : admit(request, check);
  };
  return (state, request) => (state.access ??= decide(state, request));
}

/** Lets a request for a keyed route through only with a live key, whose id (never the key) it records on the state. */
export function requireApiKey(keyCheck: KeyCheckOf): Guard {
  return (request, _response, state, route) => {
    if (route?.keyed !== true) return undefined;
    const access = keyCheck(state, request);
    return access instanceof Promise ? access.then((settled) => admit(state, settled)) : admit(state, access);
  };
}

/** The key of a well-formed `Bearer` credential; undefined for anything else. */
export function bearerKey(authorization: string): string | undefined {
  return BEARER.exec(authorization)?.[1];
}

function admit(state: RequestState, access: Access): HttpProblem | undefined {
  if (access instanceof HttpProblem) return access;
  state.keyId = access.keyId;
  return undefined;
}

function missingKey(): HttpProblem {
  return new HttpProblem('unauthorized', 'an API key is required: send Authorization: Bearer <API_KEY>', { 'WWW-Authenticate': 'Bearer' });
}

/** A key that is not (or no longer) valid: what a revoked key's request is told, wherever it ends. */
export function invalidKey(): HttpProblem {
  return new HttpProblem('unauthorized', 'the API key is not valid', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
}
