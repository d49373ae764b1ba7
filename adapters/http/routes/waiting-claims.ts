import { HttpProblem } from '../pipeline/errors.ts';

/** What a refused claim is told to wait before asking again, in seconds: a waiting claim ends within 30 s. */
const RETRY_AFTER_SECONDS = '5';

/** How many claims may wait for events at once. */
export interface WaitingClaimLimits {
  /** Of one API key, across its groups. */
  readonly perKey: number;
  /** From one client address (an IPv6 client by its /64). */
  readonly perClient: number;
  /** Of every key and address together (absent: no bound but theirs). */
  readonly inAll?: number;
}

/** One admitted waiting claim: its signal aborts when it must stop waiting. */
export interface WaitingClaim {
  /** Aborts when the service stops or the claim's key is revoked. */
  readonly signal: AbortSignal;
  /** Whether its key was revoked while it waited: it hands out nothing then. */
  readonly revoked: boolean;
  /** Frees its slot. */
  done(): void;
}

/** Claims waiting for events (`waitMs` > 0), bounded per key, per client address and in all, ended by revocation or shutdown. */
export interface WaitingClaims {
  /** One more waiting claim of `keyId` from `client` (its `clientAddressKey`), or the 429 `HttpProblem` past a cap. */
  admit(client: string, keyId: string): WaitingClaim;
  /** Claims waiting now. */
  readonly waiting: number;
  /** Ends the waiting claims of a revoked key: they answer 401 and hand out nothing. */
  keyRevoked(keyId: string): void;
  /** Ends every waiting claim (each answers what it has: nothing) and refuses new ones: for shutdown. */
  close(): void;
}

export function createWaitingClaims(limits: WaitingClaimLimits): WaitingClaims {
  const open = new Map<AbortController, { readonly keyId: string; revoked: boolean }>();
  const byKey = new Map<string, number>();
  const byClient = new Map<string, number>();
  let closed = false;
  const add = (counts: Map<string, number>, name: string, step: number) => {
    const next = (counts.get(name) ?? 0) + step;
    if (next === 0) counts.delete(name);
    else counts.set(name, next);
  };

  return {
    admit(client, keyId) {
      if (closed) throw new HttpProblem('unavailable', 'the service is shutting down; claim on another instance', { 'Retry-After': '1' });
      if ((byClient.get(client) ?? 0) >= limits.perClient) {
        throw new HttpProblem('rate_limited', `too many claims are waiting from this address (at most ${limits.perClient}); claim with waitMs 0 or try again later`, {
          'Retry-After': RETRY_AFTER_SECONDS,
        });
      }
      if ((byKey.get(keyId) ?? 0) >= limits.perKey) {
        throw new HttpProblem('rate_limited', `too many claims of this key are waiting (at most ${limits.perKey}); claim with waitMs 0 or try again later`, {
          'Retry-After': RETRY_AFTER_SECONDS,
        });
      }
      if (limits.inAll !== undefined && open.size >= limits.inAll) {
        // Not this client's doing: the instance holds as many waiting claims as it gives them of its connections.
        throw new HttpProblem('unavailable', `too many claims are waiting on this instance (at most ${limits.inAll}); claim with waitMs 0 or try again later`, {
          'Retry-After': RETRY_AFTER_SECONDS,
        });
      }
      const stop = new AbortController();
      const entry = { keyId, revoked: false };
      open.set(stop, entry);
      add(byKey, keyId, 1);
      add(byClient, client, 1);
      let freed = false;
      return {
        signal: stop.signal,
        get revoked() {
          return entry.revoked;
        },
        done() {
          if (freed) return;
          freed = true;
          open.delete(stop);
          add(byKey, keyId, -1);
          add(byClient, client, -1);
        },
      };
    },
    get waiting() {
      return open.size;
    },
    keyRevoked(keyId) {
      for (const [stop, entry] of open) {
        if (entry.keyId !== keyId) continue;
        entry.revoked = true;
        stop.abort();
      }
    },
    close() {
      closed = true;
      for (const stop of open.keys()) stop.abort();
    },
  };
}
