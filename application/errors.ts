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

/** The store could not be reached or stayed locked past its timeout; the request may be retried. */
export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailable';
  }
}
