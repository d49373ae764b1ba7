import { describe, it } from 'node:test';
import { checkGroupAcrossKill } from './support/consumer-group-crash.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

describe('a consumer group across a crash (SIGKILL) of a service process', () => {
  it('two processes on one SQLite file, four consumers: every event acked once in the end, in per-pet order, and the checkpoint reaches the head', { timeout: 180_000 }, async (t) => {
    const directory = temporaryDirectory('group-crash');
    try {
      await checkGroupAcrossKill({ PETSTORE_DATABASE: directory.file('petstore.db') }, { signal: t.signal });
    } finally {
      directory.remove();
    }
  });
});
