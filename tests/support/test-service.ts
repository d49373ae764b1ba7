import { connect } from 'node:net';
import pino from 'pino';
import type { Logger } from 'pino';
import { loadConfig } from '../../adapters/config/config.ts';
import { startService } from '../../adapters/service.ts';
import { openSqlPetStore } from '../../adapters/store/open-store.ts';
import type { SqlPetStore } from '../../adapters/store/sql-pet-store.ts';
import type { RunningService, StartOptions } from '../../adapters/service.ts';
import { checkErrorShape } from './error-shape.ts';
import type { ErrorAnswer } from './error-shape.ts';
import { responseContract } from './response-contract.ts';
import type { ResponseContract } from './response-contract.ts';
import { temporaryDirectory } from './temporary-store.ts';
import type { Guard } from '../../adapters/http/guards/guards.ts';

export const TEST_API_KEY = 'test-key-0123456789abcdef';

export interface TestService {
  readonly service: RunningService;
  /** e.g. http://127.0.0.1:40123/v1 */
  readonly baseUrl: string;
  /** e.g. http://127.0.0.1:40123 */
  readonly origin: string;
  readonly directory: string;
  /**
   * fetch `path` (starting with /) on the origin with the test key, unless `headers.authorization` says otherwise.
   * The answer is checked against the service's OpenAPI document before it is returned.
   */
  request(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** POST a JSON body to /v1/pets with the test key (checked like `request`). */
  createPet(body: unknown): Promise<Response>;
  /**
   * Writes raw bytes (for what fetch refuses to send) and reads the answer until the server closes,
   * as a Response; checked against the document when the bytes start with a request line.
   */
  sendRaw(bytes: string | Buffer): Promise<Response>;
  /** The service's database over a connection of the test's own, for checks in SQL; closed by `stop`. */
  database(): Promise<SqlPetStore>;
  stop(): Promise<void>;
}

/** The real service on a free port, over a fresh SQLite file in a temporary directory. */
export async function startTestService(
  environment: Record<string, string> = {}, options: { logger?: Logger; extraGuards?: readonly Guard[]; aggregates?: StartOptions['aggregates'] } = {},
): Promise<TestService> {
  const directory = temporaryDirectory('test');
  const config = loadConfig({
    PORT: '0',
    PETSTORE_DATABASE: directory.file('petstore.db'),
    PETSTORE_API_KEYS: TEST_API_KEY,
    ...environment,
  });
  const service = await startService(config, { logger: options.logger ?? pino({ level: 'silent' }), extraGuards: options.extraGuards, aggregates: options.aggregates });
  const origin = `http://127.0.0.1:${service.port}`;
  let database: Promise<SqlPetStore> | undefined;
  let contract: Promise<ResponseContract> | undefined;
  const check = async (method: string, target: string, response: Response) => {
    contract ??= fetch(`${origin}/v1/openapi.json`).then(async (answer) => responseContract((await answer.json()) as Record<string, unknown>));
    (await contract).check(method, target, { status: response.status, headers: response.headers, body: await response.clone().text() });
  };
  const request = async (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = TEST_API_KEY, headers, ...rest } = init;
    const merged = new Headers(headers);
    if (key !== null && !merged.has('authorization')) merged.set('authorization', `Bearer ${key}`);
    const response = await fetch(origin + path, { ...rest, headers: merged });
    await check(rest.method ?? 'GET', path, response);
    return response;
  };
  return {
    service,
    baseUrl: service.baseUrl,
    origin,
    directory: directory.path,
    request,
    createPet: (body: unknown) =>
      request('/v1/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    async sendRaw(bytes: string | Buffer) {
      const response = await exchangeRaw(service.port, bytes);
      const requestLine = /^(\S+) (\S+) HTTP\/1\.[01]\r?\n/.exec(Buffer.from(bytes).toString('latin1'));
      if (requestLine) await check(requestLine[1]!, requestLine[2]!, response);
      return response;
    },
    database: () => (database ??= openSqlPetStore(config.database, { logger: pino({ level: 'silent' }) })),
    async stop() {
      await database?.then((opened) => opened.close());
      await service.close();
      directory.remove();
    },
  };
}

function exchangeRaw(port: number, bytes: string | Buffer): Promise<Response> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const received = Buffer.concat(chunks);
      const headerEnd = received.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = received.subarray(0, headerEnd).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
      if (headerEnd < 0 || !Number.isInteger(status)) {
        reject(new Error(`not an HTTP/1.1 answer: ${JSON.stringify(received.toString('utf8').slice(0, 200))}`));
        return;
      }
      const headers = new Headers();
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        // Framing headers describe the raw bytes, not the body handed to the Response.
        if (name !== 'content-length' && name !== 'transfer-encoding') headers.append(name, line.slice(colon + 1).trim());
      }
      resolve(new Response(received.subarray(headerEnd + 4), { status, headers }));
    });
    socket.write(bytes);
  });
}

/** Reads an Error body and checks its shape: JSON, with code, message and a status equal to the HTTP one. */
export async function readError(response: Response): Promise<ErrorAnswer> {
  return checkErrorShape(response.headers.get('content-type') ?? '', await response.text(), response.status);
}
