import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyCheckOf } from '../api-keys/require-api-key.ts';
import { HttpProblem } from './errors.ts';
import { decideRate } from './rate-limit.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { RequestState } from './request-state.ts';

export interface BranchAdmissionOptions {
  readonly keyCheck: KeyCheckOf;
  readonly rateLimiter?: RateLimiter | undefined;
  /** CORS is configured: answers vary by Origin, and requests that carry one take the full chain. */
  readonly crossOrigin: boolean;
}

/**
 * The checks the app's chain makes before a route (Host, CORS, the key, the rate limit), for a pipeline
 * branch. They are decided on the request's state, which the app then reads: a request a branch leaves
 * is not checked twice, and takes one token at most.
 */
export interface BranchAdmission {
  /** The key's id when every check lets the request through; undefined leaves it, refusal and all, to the app. Writes nothing. */
  admit(request: IncomingMessage, state: RequestState): string | undefined;
  /** Sets the headers the chain would have set on an admitted request's answer (Vary, the rate limit's). */
  markAnswer(response: ServerResponse, state: RequestState): void;
}

export function createBranchAdmission({ keyCheck, rateLimiter, crossOrigin }: BranchAdmissionOptions): BranchAdmission {
  return {
    admit(request, state) {
      if (state.hostProblem !== undefined || (crossOrigin && request.headers.origin !== undefined)) return undefined;
      const access = keyCheck(state, request);
      if (access instanceof Promise || access instanceof HttpProblem) return undefined;
      const decision = rateLimiter && decideRate(rateLimiter, state, access.keyId);
      return decision === undefined || decision.allowed ? access.keyId : undefined;
    },
    markAnswer(response, state) {
      if (crossOrigin) response.setHeader('Vary', 'Origin');
      const headers = state.rate?.headers;
      if (headers !== undefined) for (const name in headers) response.setHeader(name, headers[name]!);
    },
  };
}
