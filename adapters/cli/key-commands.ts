import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import type { ApiKeyRows, ManagedApiKeys } from '../api-keys/key-table.ts';
import { CONFIGURATION_NOTE, printTable, UsageError } from './command.ts';
import type { Command, ParsedArguments } from './command.ts';

const LABEL = /^[\x20-\x7e]{1,100}$/;

/**
 * Runs `work` on the configured database's key table (loaded only when a command runs). Only `create`
 * makes a database that is not there yet; listing or revoking needs one that exists.
 */
async function withKeyTable<T>(environment: ParsedArguments['environment'], use: 'create' | 'existing', work: (keys: ManagedApiKeys) => Promise<T>): Promise<T> {
  const [{ withConfiguredDatabase, withExistingDatabase }, { createManagedApiKeys }] = await Promise.all([import('./with-database.ts'), import('../api-keys/key-table.ts')]);
  const onStore = (store: { apiKeyTable: ApiKeyRows }) => work(createManagedApiKeys(store.apiKeyTable));
  return use === 'create' ? withConfiguredDatabase(environment, true, onStore) : withExistingDatabase(environment, onStore);
}

/** `keys create | list | revoke`: the key table, which holds hashes only. */
export const KEY_COMMANDS: Record<string, Command> = {
  'keys create': {
    summary: 'create an API key and print it (the only time it is shown)',
    help: [
      'petstore keys create [--label LABEL]',
      '',
      'Creates an API key and prints it alone on standard output, so KEY=$(petstore keys create) works;',
      'its id and a reminder go to standard error. The table keeps only the key\'s SHA-256: a lost key',
      'cannot be shown again, only revoked and replaced. Running services accept it within a second.',
      '',
      '  --label LABEL   what the key is for (1 to 100 printable ASCII characters), shown by keys list',
      '',
      CONFIGURATION_NOTE,
    ].join('\n'),
    options: { label: { type: 'string', short: 'l' } },
    async run({ options, environment }) {
      const label = (options.label as string | undefined) ?? '';
      if (options.label !== undefined && !LABEL.test(label)) {
        throw new UsageError(`--label must be 1 to 100 printable ASCII characters, got ${JSON.stringify(label)}`, KEY_COMMANDS['keys create']!.help);
      }
      const { id, key } = await withKeyTable(environment, 'create', (keys) => keys.create(label, new Date()));
      process.stdout.write(`${key}\n`);
      process.stderr.write(`created key ${id}${label ? ` (${label})` : ''}; this is the only time it is shown\n`);
      return 0;
    },
  },
  'keys list': {
    summary: 'list the API keys in the table (never the keys themselves)',
    help: [
      'petstore keys list',
      '',
      'Lists the keys in the key table: id, state, when created and revoked, label. The keys themselves',
      'are not stored and cannot be shown. Keys from PETSTORE_API_KEYS are not in the table and not listed.',
      '',
      CONFIGURATION_NOTE,
    ].join('\n'),
    async run({ environment }) {
      const keys = await withKeyTable(environment, 'existing', (table) => table.list());
      if (keys.length === 0) {
        process.stdout.write('no keys in the table\n');
        return 0;
      }
      printTable([
        ['id', 'state', 'created', 'revoked', 'label'],
        ...keys.map((key) => [String(key.id), key.revokedAt ? 'revoked' : 'active', key.createdAt, key.revokedAt ?? '-', key.label || '-']),
      ]);
      return 0;
    },
  },
  'keys revoke': {
    summary: 'revoke an API key by its id',
    help: [
      'petstore keys revoke <id>',
      '',
      'Revokes the key with that id (see keys list). Running services refuse it within a second;',
      'a service that revokes through its own table refuses it with the very next request.',
      'Exits 1 when there is no such key or it was already revoked.',
      '',
      CONFIGURATION_NOTE,
    ].join('\n'),
    arguments: ['id'],
    async run({ arguments: [idText], environment }) {
      if (parseDecimalInteger(idText!, 1) === undefined) throw new UsageError(`<id> must be a key id such as 3 (see keys list), got ${JSON.stringify(idText)}`, KEY_COMMANDS['keys revoke']!.help);
      const id = Number(idText);
      return withKeyTable(environment, 'existing', async (keys) => {
        if (await keys.revoke(id, new Date())) {
          process.stdout.write(`revoked key ${id}\n`);
          return 0;
        }
        const existing = (await keys.list()).find((key) => key.id === id);
        process.stderr.write(existing ? `petstore: key ${id} was already revoked at ${existing.revokedAt}\n` : `petstore: there is no key ${id} (see keys list)\n`);
        return 1;
      });
    },
  },
};
