import type { PetStoreErrorCode } from './types.ts';

/** The service answered, and not with success: every non-2xx answer, in the service's own terms. */
export class PetStoreError extends Error {
  override readonly name = 'PetStoreError';
  readonly code: PetStoreErrorCode;
  /** The HTTP status. */
  readonly status: number;
  /** The answer's X-Request-Id: the service logs every request under it. */
  readonly requestId: string | undefined;
  /** How long the service asked to wait before trying again (Retry-After), if it did. */
  readonly retryAfterMs: number | undefined;

  constructor(fields: {
    code: PetStoreErrorCode;
    message: string;
    status: number;
    requestId: string | undefined;
    retryAfterMs?: number | undefined;
  }) {
    super(fields.message);
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/**
 * No answer arrived: the connection could not be made or broke off. A request that was sent may
 * still have been applied; `cause` is what the runtime's fetch reported.
 */
export class PetStoreNetworkError extends Error {
  override readonly name = 'PetStoreNetworkError';

  constructor(message: string, cause: unknown) {
    super(message, { cause });
  }
}

/** No whole answer arrived within the client's `timeoutMs`. A request that was sent may still have been applied. */
export class PetStoreTimeoutError extends Error {
  override readonly name = 'PetStoreTimeoutError';
  readonly timeoutMs: number;

  constructor(message: string, timeoutMs: number) {
    super(message);
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's AbortSignal ended the call; `cause` is the signal's reason. */
export class PetStoreAbortError extends Error {
  override readonly name = 'PetStoreAbortError';

  constructor(message: string, cause: unknown) {
    super(message, { cause });
  }
}
