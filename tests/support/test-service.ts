import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../adapters/config.ts';
import { startService } from '../../adapters/service.ts';
import type { RunningService } from '../../adapters/service.ts';
import { checkErrorShape } from './error-shape.ts';
import type { ErrorAnswer } from './error-shape.ts';

export const TEST_API_KEY = 'test-key-0123456789abcdef';

export interface TestService {
  readonly service: RunningService;
  /** e.g. http://127.0.0.1:40123/v1 */
  readonly baseUrl: string;
  /** e.g. http://127.0.0.1:40123 */
  readonly origin: string;
  readonly directory: string;
  /** fetch `path` (starting with /) on the origin with the test key, unless `headers.authorization` says otherwise. */
  request(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** POST a JSON body to /v1/pets with the test key. */
  createPet(body: unknown): Promise<Response>;
  stop(): Promise<void>;
}

/** The real service on a free port, over a fresh SQLite file in a temporary directory. */
export async function startTestService(environment: Record<string, string> = {}): Promise<TestService> {
  const directory = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  const config = loadConfig({
    PORT: '0',
    PETSTORE_DATABASE: join(directory, 'petstore.db'),
    PETSTORE_API_KEYS: TEST_API_KEY,
    ...environment,
  });
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  const origin = `http://127.0.0.1:${service.port}`;
  const request = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = TEST_API_KEY, headers, ...rest } = init;
    const merged = new Headers(headers);
    if (key !== null && !merged.has('authorization')) merged.set('authorization', `Bearer ${key}`);
    return fetch(origin + path, { ...rest, headers: merged });
  };
  return {
    service,
    baseUrl: service.baseUrl,
    origin,
    directory,
    request,
    createPet: (body: unknown) =>
      request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    async stop() {
      await service.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Reads an Error body and checks its shape: JSON, with code, message and a status equal to the HTTP one. */
export async function readError(response: Response): Promise<ErrorAnswer> {
  return checkErrorShape(response.headers.get('content-type') ?? '', await response.text(), response.status);
}
