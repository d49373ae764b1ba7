#!/usr/bin/env node
// Runs a command with a throwaway PostgreSQL cluster: its URL is in PETSTORE_TEST_POSTGRES_URL
// (the superuser, database `postgres`), and the cluster is removed when the command ends, whatever
// its outcome. Without PostgreSQL binaries it says so and sets PETSTORE_TEST_POSTGRES=pglite.
//   node scripts/with-postgres.mjs node scripts/run-tests.mjs tests/postgres
import { spawn } from 'node:child_process';
import { register } from 'tsx/esm/api';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/with-postgres.mjs <command> [args...]');
  process.exit(2);
}
register();
const { withTestPostgres } = await import('./postgres-cluster.ts');
const code = await withTestPostgres(
  () => new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('error', (error) => {
      console.error(`with-postgres: ${error.message}`);
      resolve(127);
    });
    child.on('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 128 : 1)));
  }),
  (line) => console.error(`with-postgres: ${line}`),
);
process.exit(code);
