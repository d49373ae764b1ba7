import { describe } from 'node:test';
import { idempotencyExpiryCases } from '../support/idempotency-expiry-cases.ts';
import { openTemporaryStore } from '../support/temporary-store.ts';
import { startTestService } from '../support/test-service.ts';

describe('expired Idempotency-Key records on SQLite', () => {
  idempotencyExpiryCases(() => openTemporaryStore('sqlite'), (environment) => startTestService(environment));
});
