import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import { CONFIGURATION_NOTE, printTable, UsageError } from './command.ts';
import type { Command, ParsedArguments } from './command.ts';
import type { ConsumerGroupPorts } from '../../application/index.ts';

/** Runs `work` on the configured database's consumer groups (loaded only when a command runs); refuses a missing database. */
async function withGroups<T>(environment: ParsedArguments['environment'], work: (ports: ConsumerGroupPorts) => Promise<T>): Promise<T> {
  const { withExistingDatabase } = await import('./with-database.ts');
  return withExistingDatabase(environment, (store) => work({ consumerGroups: store.consumerGroups, eventLog: store.eventLog, clock: store.clock }));
}

const KEY_ID = { 'key-id': { type: 'string' } } as const;
const KEY_NOTE = 'A group is named within the API key that owns it: --key-id ID is that key\'s id (as `groups list` shows it).';

function keyIdOf(options: ParsedArguments['options'], help: string): string {
  const keyId = options['key-id'] as string | undefined;
  if (keyId === undefined || keyId === '') throw new UsageError('--key-id is required', help);
  return keyId;
}

/** `groups list | show | parked | replay | delete`: the operator's view of every key's consumer groups (docs/consumer-groups.md). */
export const GROUP_COMMANDS: Record<string, Command> = {
  'groups list': {
    summary: "list every key's consumer groups and where they stand (experimental)",
    help: [
      'petstore groups list',
      '',
      'Lists every consumer group: owning key id, name, checkpoint (every event at or below it is acked or parked),',
      'the log\'s head, the lag, events in flight and parked.',
      '',
      CONFIGURATION_NOTE,
    ].join('\n'),
    async run({ environment }) {
      const rows = await withGroups(environment, async ({ consumerGroups, eventLog, clock }) => {
        const head = await eventLog.end();
        const groups = await consumerGroups.list();
        const statuses = await Promise.all(groups.map((group) => consumerGroups.group(group.ownerKeyId, group.name).status(clock.now())));
        return statuses.filter((status) => status !== undefined).map((status) => [
          status.group.ownerKeyId, status.group.name, String(status.checkpoint), String(head), String(Math.max(0, head - status.checkpoint)), String(status.inFlight), String(status.parked),
        ]);
      });
      if (rows.length === 0) {
        process.stdout.write('no consumer groups\n');
        return 0;
      }
      printTable([['key', 'group', 'checkpoint', 'head', 'lag', 'in flight', 'parked'], ...rows]);
      return 0;
    },
  },
  'groups show': {
    summary: 'show one consumer group: its settings, checkpoint and consumers (experimental)',
    help: ['petstore groups show --key-id ID <group>', '', 'Prints the group as JSON. Exits 1 when there is none.', '', KEY_NOTE, CONFIGURATION_NOTE].join('\n'),
    arguments: ['group'],
    options: KEY_ID,
    async run({ arguments: [name], options, environment }) {
      const keyId = keyIdOf(options, GROUP_COMMANDS['groups show']!.help);
      const shown = await withGroups(environment, async ({ consumerGroups, eventLog, clock }) => {
        const status = await consumerGroups.group(keyId, name!).status(clock.now());
        if (!status) return undefined;
        const { groupView } = await import('../http/routes/consumer-group-routes.ts');
        return groupView(status, await eventLog.end());
      });
      if (!shown) {
        return noSuchGroup(name!, keyId);
      }
      process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      return 0;
    },
  },
  'groups parked': {
    summary: "list a consumer group's parked events, by position (experimental)",
    help: [
      'petstore groups parked --key-id ID <group> [--after P] [--limit N]',
      '',
      'Lists up to N parked events (default 20, at most 100) after log position P: position, deliveries, when and why parked.',
      'Exits 1 when there is no such group.',
      '',
      KEY_NOTE,
      CONFIGURATION_NOTE,
    ].join('\n'),
    arguments: ['group'],
    options: { ...KEY_ID, after: { type: 'string' }, limit: { type: 'string' } },
    async run({ arguments: [name], options, environment }) {
      const help = GROUP_COMMANDS['groups parked']!.help;
      const keyId = keyIdOf(options, help);
      const after = options.after === undefined ? 0 : parseDecimalInteger(options.after as string, 0);
      if (after === undefined) throw new UsageError(`--after must be a log position in plain digits, got ${JSON.stringify(options.after)}`, help);
      const limit = options.limit === undefined ? 20 : parseDecimalInteger(options.limit as string, 1, 100);
      if (limit === undefined) throw new UsageError(`--limit must be a whole number from 1 to 100, got ${JSON.stringify(options.limit)}`, help);
      const parked = await withGroups(environment, async ({ consumerGroups }) =>
        {
        const group = consumerGroups.group(keyId, name!);
        return (await group.get()) ? group.parked(after, limit, new Date()) : undefined;
      });
      if (!parked) {
        return noSuchGroup(name!, keyId);
      }
      if (parked.length === 0) {
        process.stdout.write('no parked events\n');
        return 0;
      }
      printTable([['position', 'deliveries', 'parked at', 'reason'], ...parked.map((entry) => [String(entry.position), String(entry.deliveries), entry.parkedAt, entry.reason])]);
      return 0;
    },
  },
  'groups replay': {
    summary: "hand a consumer group's parked events out again, deliveries from 1 (experimental)",
    help: [
      'petstore groups replay --key-id ID <group> [--position P]...',
      '',
      'Hands every parked event (or those at the positions given) back to the group\'s consumers, a page at a time.',
      'Exits 1 when there is no such group.',
      '',
      KEY_NOTE,
      CONFIGURATION_NOTE,
    ].join('\n'),
    arguments: ['group'],
    options: { ...KEY_ID, position: { type: 'string', multiple: true } },
    async run({ arguments: [name], options, environment }) {
      const help = GROUP_COMMANDS['groups replay']!.help;
      const keyId = keyIdOf(options, help);
      const positions = (options.position as string[] | undefined)?.map((text) => {
        const position = parseDecimalInteger(text, 1);
        if (position === undefined) throw new UsageError(`--position must be a log position in plain digits, got ${JSON.stringify(text)}`, help);
        return position;
      });
      const [{ replayParked }] = await Promise.all([import('../../application/index.ts')]);
      const replayed = await withGroups(environment, async (ports) =>
        (await ports.consumerGroups.group(keyId, name!).get()) ? replayParked(ports, keyId, name!, positions) : undefined);
      if (replayed === undefined) {
        return noSuchGroup(name!, keyId);
      }
      process.stdout.write(`handed back ${replayed} parked event${replayed === 1 ? '' : 's'} of ${name}\n`);
      return 0;
    },
  },
  'groups delete': {
    summary: 'delete a consumer group with its leases and parked events (experimental)',
    help: ['petstore groups delete --key-id ID <group>', '', 'Exits 1 when there is no such group.', '', KEY_NOTE, CONFIGURATION_NOTE].join('\n'),
    arguments: ['group'],
    options: KEY_ID,
    async run({ arguments: [name], options, environment }) {
      const keyId = keyIdOf(options, GROUP_COMMANDS['groups delete']!.help);
      const deleted = await withGroups(environment, ({ consumerGroups }) => consumerGroups.group(keyId, name!).delete());
      if (!deleted) return noSuchGroup(name!, keyId);
      process.stdout.write(`deleted consumer group ${name} of key ${keyId}\n`);
      return 0;
    },
  },
};

/** Exit status 1, said as the CLI's other refusals are. */
function noSuchGroup(name: string, keyId: string): number {
  process.stderr.write(`petstore: no consumer group ${name} of key ${keyId}\n`);
  return 1;
}
