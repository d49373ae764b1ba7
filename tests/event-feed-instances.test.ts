import { describe, it } from 'node:test';
import { startServiceProcess } from './support/service-process.ts';
import type { ServiceProcess } from './support/service-process.ts';
import { checkStreamSeesEveryInstance } from './support/event-feed-instances.ts';
import { temporaryDirectory } from './support/temporary-store.ts';

const KEY = 'feed-instances-key-0123456789';

describe('the event feed across processes on one SQLite file', () => {
  it('a stream held open on one process sees every write made through the other, in order, without a restart', { timeout: 120_000 }, async () => {
    const directory = temporaryDirectory('feed-instances');
    const services: ServiceProcess[] = [];
    try {
      const environment = { PETSTORE_DATABASE: directory.file('petstore.db'), PETSTORE_API_KEYS: KEY };
      // One after the other: the second opens a file the first has migrated.
      services.push(startServiceProcess(environment));
      const first = await services[0]!.listening;
      services.push(startServiceProcess(environment));
      const second = await services[1]!.listening;
      await checkStreamSeesEveryInstance([first, second], KEY);
    } finally {
      for (const service of services) service.cleanup();
      directory.remove();
    }
  });
});
