/** The stream was not at the version the writer expected: someone else wrote first. */
export class StreamVersionConflict extends Error {
  readonly streamId: string;
  readonly expected: number | 'no_stream';
  readonly actual: number;

  constructor(streamId: string, expected: number | 'no_stream', actual: number) {
    super(`stream ${streamId} is at version ${actual}, expected ${expected === 'no_stream' ? 'no stream' : expected}`);
    this.name = 'StreamVersionConflict';
    this.streamId = streamId;
    this.expected = expected;
    this.actual = actual;
  }
}

export class PetNotFound extends Error {
  readonly petId: number | string;

  constructor(petId: number | string) {
    super(`pet ${petId} was not found`);
    this.name = 'PetNotFound';
    this.petId = petId;
  }
}

/** A query value outside what the use case accepts. */
export class InvalidPetQuery extends Error {
  readonly parameter: string;

  constructor(parameter: string, message: string) {
    super(message);
    this.name = 'InvalidPetQuery';
    this.parameter = parameter;
  }
}

/**
 * The store could not be reached, stayed locked past its timeout, or its disk failed (full, I/O error,
 * read-only); the request may be retried after `retryAfterSeconds`.
 */
export class StoreUnavailable extends Error {
  readonly retryAfterSeconds: number;

  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'StoreUnavailable';
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}

/** The pet moved on since the version the caller named (If-Match). */
export class VersionMismatch extends Error {
  readonly expected: readonly number[] | '*';
  readonly actual: number;

  constructor(expected: readonly number[] | '*', actual: number) {
    super(`the pet is at version ${actual}, not ${expected === '*' ? 'any' : expected.length === 0 ? 'a version the request named (weak entity tags name none)' : expected.join(' or ')}`);
    this.name = 'VersionMismatch';
    this.expected = expected;
    this.actual = actual;
  }
}

/** An idempotency key came back with a different request than the one it first created. */
export class IdempotencyKeyReused extends Error {
  readonly key: string;

  constructor(key: string) {
    super(`the Idempotency-Key ${JSON.stringify(key)} was already used with a different request`);
    this.name = 'IdempotencyKeyReused';
    this.key = key;
  }
}

/** A store saw the idempotency key stored already (a concurrent request with it won). */
export class IdempotencyKeyTaken extends Error {
  constructor(readonly scope: string, readonly key: string) {
    super(`idempotency key ${JSON.stringify(key)} of ${scope} is already stored`);
    this.name = 'IdempotencyKeyTaken';
  }
}

/** Concurrent writers kept moving the pet; the caller may try again. */
export class TooMuchContention extends Error {
  constructor(streamId: string, attempts: number) {
    super(`stream ${streamId} kept changing during ${attempts} attempts`);
    this.name = 'TooMuchContention';
  }
}
