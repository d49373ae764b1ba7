import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../config.ts';
import type { DatabaseConfig } from '../config.ts';
import { openPetStore } from '../open-pet-store.ts';
import { pendingMigrations } from '../sql/migrations.ts';
import { rebuildPetProjection, verifyPetProjection } from '../sql/pet-projection-maintenance.ts';
import type { SqlPetStore } from '../sql/sql-pet-store.ts';
import { progressReporter } from './progress.ts';
import { serve } from './serve.ts';

/** Thrown for a wrong command line: printed with the usage, exit code 2. */
class UsageError extends Error {}

interface Command {
  readonly summary: string;
  readonly help: string;
  run(args: readonly string[]): Promise<number>;
}

const COMMON = `Configuration comes from the environment, as for the service (PETSTORE_DATABASE, ...).`;

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'run the HTTP service (what npm start runs)',
    help: `petstore serve\n\nServes the API until SIGTERM or SIGINT. ${COMMON}`,
    async run() {
      await serve(process.env);
      return new Promise<number>(() => {}); // runs until a signal ends the process
    },
  },
  migrate: {
    summary: 'apply pending database migrations',
    help: `petstore migrate\n\nApplies every pending migration and lists them. Safe while the service runs. ${COMMON}`,
    async run() {
      const config = loadConfig(process.env);
      const before = await withDatabase(config.database, false, (store) => pendingMigrations(store.db));
      await withDatabase(config.database, true, async () => undefined);
      process.stdout.write(before.length ? `applied ${before.length} migration(s): ${before.join(', ')}\n` : 'the database is up to date\n');
      return 0;
    },
  },
  'projection rebuild': {
    summary: 'replay the whole log into a fresh read model and swap it in',
    help: `petstore projection rebuild\n\nReplays every event in log order into a new pets table and swaps it in atomically.\nSafe while the service runs: writers wait for the swap only, readers see the old or the new table. ${COMMON}`,
    async run() {
      const config = loadConfig(process.env);
      const result = await withDatabase(config.database, true, (store) => rebuildPetProjection(store, progressReporter('rebuild')));
      process.stdout.write(`rebuilt the read model: ${result.pets} pets from ${result.events} events\n`);
      return 0;
    },
  },
  'projection verify': {
    summary: 'compare the read model with a replay of the log',
    help: `petstore projection verify\n\nRebuilds the read model into a scratch table and compares it row by row with the live one.\nPrints every difference; exits 1 when there is any, 0 when there is none. ${COMMON}`,
    async run() {
      const config = loadConfig(process.env);
      const differences = await withDatabase(config.database, true, (store) => verifyPetProjection(store, progressReporter('verify')));
      for (const difference of differences) process.stdout.write(`${JSON.stringify(difference)}\n`);
      process.stdout.write(differences.length ? `${differences.length} difference(s) between the read model and the log\n` : 'the read model matches the log\n');
      return differences.length ? 1 : 0;
    },
  },
};

/**
 * Opens the configured store for one command. Maintenance is no request: on PostgreSQL it runs
 * without the statement timeout, so replaying a long log is never cancelled half way.
 */
async function withDatabase<T>(database: DatabaseConfig, migrate: boolean, work: (store: SqlPetStore) => Promise<T>): Promise<T> {
  const store = await openPetStore(database.kind === 'postgres' ? { ...database, statementTimeoutMs: 0 } : database, { migrate });
  try {
    if (!migrate) await sql`select 1`.execute(store.db);
    return await work(store);
  } finally {
    await store.close();
  }
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

export async function runCli(argv: readonly string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  try {
    if (!found) throw new UsageError(`unknown command: ${argv.join(' ')}`);
    if (found.rest.includes('--help') || found.rest.includes('-h')) {
      process.stdout.write(`${found.command.help}\n`);
      return 0;
    }
    if (found.rest.length > 0) throw new UsageError(`${found.name} takes no arguments, got: ${found.rest.join(' ')}`);
    return await found.command.run(found.rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`petstore: ${error.message}\n\n${usage()}`);
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

runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
