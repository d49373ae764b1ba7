import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/config-error.ts';
import { CONFIGURATION_NOTE as COMMON, UsageError } from './command.ts';
import { nearestName } from './nearest-name.ts';
import type { Command, ParsedArguments } from './command.ts';
import { KEY_COMMANDS } from './key-commands.ts';
import { EVENTS_TAIL } from './events-tail-command.ts';
import { WEBHOOK_COMMANDS } from './webhook-commands.ts';
import { GROUP_COMMANDS } from './group-commands.ts';

// Each command loads what it needs when it runs, so --help and a wrong command line answer at once.
const database = () => import('./with-database.ts');
const projectionModules = () => Promise.all([database(), import('./progress.ts')]);

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'run the HTTP service from the TypeScript sources (npm start runs it bundled)',
    help: `petstore serve\n\nServes the API until SIGTERM or SIGINT, from the TypeScript sources through tsx. npm start serves the same\nservice bundled into dist/ (less memory: the way to deploy). ${COMMON}`,
    async run({ environment }) {
      const { serve } = await import('./serve.ts');
      await serve(environment);
      return new Promise<number>(() => {}); // runs until a signal ends the process
    },
  },
  migrate: {
    summary: 'apply pending database migrations',
    help: `petstore migrate\n\nApplies every pending migration and lists them. Safe while the service runs. ${COMMON}`,
    async run({ environment }) {
      const { withConfiguredDatabase } = await database();
      const before = await withConfiguredDatabase(environment, false, (store) => store.pendingMigrations());
      await withConfiguredDatabase(environment, true, async () => undefined);
      process.stdout.write(before.length ? `applied ${before.length} migration(s): ${before.join(', ')}\n` : 'the database is up to date\n');
      return 0;
    },
  },
  openapi: {
    summary: 'print the OpenAPI 3.1 document (what GET /v1/openapi.json serves)',
    help: `petstore openapi\n\nPrints the OpenAPI 3.1 document as JSON. Its servers are production and staging as configured\n(PETSTORE_PRODUCTION_URL, PETSTORE_STAGING_URL; one not configured is left out) and, in development,\nhttp://HOST:PORT/v1. Needs no database. ${COMMON}`,
    async run({ environment }) {
      const [{ loadConfig, localBaseUrl }, { buildOpenApiDocument, openApiServers }] = await Promise.all([import('../config/config.ts'), import('../../contract/openapi-document.ts')]);
      const config = loadConfig(environment);
      const current = config.publicBaseUrl ?? localBaseUrl(config.host, config.port);
      process.stdout.write(`${JSON.stringify(buildOpenApiDocument(openApiServers(config, current)), null, 2)}\n`);
      return 0;
    },
  },
  ...KEY_COMMANDS,
  check: {
    summary: 'check every page of the SQLite database (PRAGMA integrity_check)',
    help: `petstore check\n\nRuns SQLite's full integrity check on the database and prints every problem it finds.\nExits 1 when there is any, 0 when the file is sound. The service runs the quicker quick_check at\nstart and refuses a damaged file. PostgreSQL checks its own pages. ${COMMON}`,
    async run({ environment }) {
      const { checkConfiguredDatabase } = await import('./check-database.ts');
      const problems = await checkConfiguredDatabase(environment);
      for (const problem of problems) process.stdout.write(`${problem}\n`);
      process.stdout.write(problems.length ? `${problems.length} problem(s): the database is damaged; restore it from a backup\n` : 'the database is sound\n');
      return problems.length ? 1 : 0;
      },
    },
  backup: {
    summary: 'copy the SQLite store to FILE while the service runs',
    arguments: ['file'],
    help: `petstore backup <file>\n\nWrites a consistent copy of the SQLite store (every write committed before the backup began) to <file>,\nreplacing it atomically. Safe while the service serves and writes. On PostgreSQL use pg_dump (docs/backups.md). ${COMMON}`,
    async run({ environment, arguments: [file] }) {
      const [{ loadConfig }, { backupSqliteStore }] = await Promise.all([import('../config/config.ts'), import('../store/sqlite/sqlite-backup.ts')]);
      const { database } = loadConfig(environment);
      if (database.kind !== 'sqlite') throw new Error('backup copies a SQLite store; on PostgreSQL use pg_dump (see docs/backups.md)');
      requireFolderOf(file!);
      const { bytes } = await backupSqliteStore(database.path, file!);
      process.stdout.write(`backed up ${database.path} to ${file} (${bytes} bytes)\n`);
      return 0;
    },
  },
  'events tail': EVENTS_TAIL,
  ...WEBHOOK_COMMANDS,
  ...GROUP_COMMANDS,
  'projection rebuild': {
    summary: 'replay the whole log into a fresh read model and swap it in',
    help: `petstore projection rebuild\n\nReplays every event in log order into new read-model tables and swaps them in atomically.\nSafe while the service runs: writers wait for the swap only, readers see the old or the new table. ${COMMON}`,
    async run({ environment }) {
      const [{ withExistingDatabase }, { progressReporter }] = await projectionModules();
      const result = await withExistingDatabase(environment, (store) => store.rebuildProjection(progressReporter('rebuild')));
      process.stdout.write(`rebuilt the read model: ${result.rows} rows from ${result.events} events\n`);
      return 0;
    },
  },
  'projection verify': {
    summary: 'compare the read model with a replay of the log',
    help: `petstore projection verify\n\nRebuilds the read model into a scratch table and compares it row by row with the live one.\nPrints every difference; exits 1 when there is any, 0 when there is none. ${COMMON}`,
    async run({ environment }) {
      const [{ withExistingDatabase }, { progressReporter }] = await projectionModules();
      const differences = await withExistingDatabase(environment, (store) => store.verifyProjection(progressReporter('verify')));
      for (const difference of differences) process.stdout.write(`${JSON.stringify(difference)}\n`);
      process.stdout.write(differences.length ? `${differences.length} difference(s) between the read model and the log\n` : 'the read model matches the log\n');
      return differences.length ? 1 : 0;
    },
  },
};

/** A file to write names a folder that exists: said about what the user typed, before any temporary file beside it. */
function requireFolderOf(file: string): void {
  const folder = dirname(resolve(file));
  if (!existsSync(folder)) throw new Error(`cannot write ${file}: the folder ${dirname(file)} does not exist`);
  if (!statSync(folder).isDirectory()) throw new Error(`cannot write ${file}: ${dirname(file)} is not a folder`);
  if (existsSync(file) && statSync(file).isDirectory()) throw new Error(`cannot write ${file}: it is a folder; name a file in it`);
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`);
  return `usage: petstore <command> [--help]\n\ncommands:\n${lines.join('\n')}\n`;
}

/** Finds the command named by the leading words of `argv`: the longest name that matches. */
function findCommand(argv: readonly string[]): { name: string; command: Command; rest: string[] } | undefined {
  for (let words = Math.min(argv.length, 2); words >= 1; words--) {
    const name = argv.slice(0, words).join(' ');
    const command = COMMANDS[name];
    if (command) return { name, command, rest: argv.slice(words) };
  }
  return undefined;
}

/** The commands of a group such as `keys`, for `petstore keys` alone. */
function groupUsage(group: string): string | undefined {
  const names = Object.keys(COMMANDS).filter((name) => name.startsWith(`${group} `));
  if (names.length === 0) return undefined;
  const width = Math.max(...names.map((name) => name.length));
  return `usage: petstore ${group} <${names.map((name) => name.slice(group.length + 1)).join('|')}> [--help]\n\n${names.map((name) => `  ${name.padEnd(width)}  ${COMMANDS[name]!.summary}`).join('\n')}\n`;
}

function parse(name: string, command: Command, rest: readonly string[], environment: ParsedArguments['environment']): ParsedArguments {
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: command.options ?? {}, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs's own advice about '--' only confuses here: keep its first sentence.
    throw new UsageError((error as Error).message.split('. ')[0]!.replace(/\.$/, ''), command.help);
  }
  const expected = command.arguments ?? [];
  if (parsed.positionals.length !== expected.length) {
    const wanted = expected.length ? expected.map((argument) => `<${argument}>`).join(' ') : 'no arguments';
    const got = parsed.positionals.length ? parsed.positionals.join(' ') : 'none';
    throw new UsageError(`${name} takes ${wanted}, got: ${got}`, command.help);
  }
  return { options: parsed.values, arguments: parsed.positionals, environment };
}

/** The service's version, from its package.json (read only when asked). */
function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** An unknown command line as a mistake: what was typed, the nearest command when one is near, and the usage of its group. */
function unknownCommand(argv: readonly string[]): UsageError {
  let suggestion = '';
  for (let words = Math.min(argv.length, 2); words >= 1 && suggestion === ''; words--) {
    const near = nearestName(argv.slice(0, words).join(' '), Object.keys(COMMANDS));
    if (near !== undefined) suggestion = `; did you mean \`${['petstore', near, ...argv.slice(words)].join(' ')}\`?`;
  }
  return new UsageError(`unknown command: ${argv.join(' ')}${suggestion}`, groupUsage(argv[0]!)?.trimEnd());
}

/** Runs the command `argv` names, with configuration from `environment`; resolves with the exit code. */
export async function runCli(argv: readonly string[], environment: ParsedArguments['environment']): Promise<number> {
  endQuietlyWhenTheReaderLeaves();
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    process.stdout.write(`petstore ${version()}\n`);
    return 0;
  }
  const found = findCommand(argv);
  try {
    if (!found) {
      const group = groupUsage(argv[0]!);
      if (group && (argv.length === 1 || argv[1] === '--help' || argv[1] === '-h')) {
        (argv.length === 1 ? process.stderr : process.stdout).write(group);
        return argv.length === 1 ? 2 : 0;
      }
      throw unknownCommand(argv);
    }
    if (found.rest.includes('--help') || found.rest.includes('-h')) {
      process.stdout.write(`${found.command.help}\n`);
      return 0;
    }
    return await found.command.run(parse(found.name, found.command, found.rest, environment));
  } catch (error) {
    if (error instanceof UsageError) {
      const help = error.help ?? found?.command.help;
      process.stderr.write(`petstore: ${error.message}\n\n${help ? `${help}\n` : usage()}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`petstore: configuration error: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`petstore: ${(error as Error).message}\n`);
    return 1;
  }
}

/**
 * A reader that closes the pipe early (`petstore openapi | head -1`) has all it wanted: exit 0 at once,
 * as Unix tools do, rather than crash on EPIPE.
 */
function endQuietlyWhenTheReaderLeaves(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
