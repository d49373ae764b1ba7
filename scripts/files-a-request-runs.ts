// The project's files whose code runs while the service answers one request, measured by V8's precise
// coverage: the service on a fresh SQLite file, warmed by the same request twice, then the request once
// more with the coverage counting. `docs/architecture.md` counts a creation's files with it.
//
//   node --import tsx scripts/files-a-request-runs.ts                 # POST /v1/pets
//   node --import tsx scripts/files-a-request-runs.ts GET /v1/pets
//   node --import tsx scripts/files-a-request-runs.ts POST /v1/pets --functions   # and the functions that ran in each
import { Session } from 'node:inspector/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadConfig } from '../adapters/config/config.ts';
import { startService } from '../adapters/service.ts';

const [method = 'POST', path = '/v1/pets'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const withFunctions = process.argv.includes('--functions');
const KEY = 'walk-key-0123456789abcdef';
const root = fileURLToPath(new URL('..', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'petstore-walk-'));
const service = await startService(loadConfig({ PORT: '0', PETSTORE_DATABASE: join(directory, 'petstore.db'), PETSTORE_API_KEYS: KEY }), { logger: pino({ level: 'silent' }) });
let sent = 0;
const send = async () => {
  const body = method === 'POST' ? JSON.stringify({ name: `Walked ${sent++}`, categoryId: 1 }) : undefined;
  const answer = await fetch(`http://127.0.0.1:${service.port}${path}`, {
    method, headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body } : {}),
  });
  await answer.arrayBuffer();
  return answer.status;
};
await send();
await send();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
// Counts start from here: the request's, and whatever timers fall due while it is answered.
await session.post('Profiler.takePreciseCoverage');
const status = await send();
const { result } = await session.post('Profiler.takePreciseCoverage');
await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
await service.close();
rmSync(directory, { recursive: true, force: true });

const ran = result
  .filter((script) => script.url.startsWith('file://'))
  .map((script) => ({
    file: relative(root, fileURLToPath(script.url)),
    functions: [...new Set(script.functions.filter((fn) => fn.ranges[0]!.count > 0).map((fn) => fn.functionName || '(anonymous)'))],
  }))
  .filter(({ file, functions }) => functions.length > 0 && !file.startsWith('..') && !file.includes('node_modules') && !file.startsWith('scripts'))
  .sort((a, b) => a.file.localeCompare(b.file));
console.log(`${method} ${path}: ${status}; ${ran.length} files of the project ran:`);
for (const { file, functions } of ran) console.log(withFunctions ? `  ${file}: ${functions.filter((name) => name !== '(anonymous)').join(', ')}` : `  ${file}`);
