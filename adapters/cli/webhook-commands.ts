import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import { CONFIGURATION_NOTE, printTable, UsageError } from './command.ts';
import type { Command, ParsedArguments } from './command.ts';
import { WEBHOOK_STATUSES } from '../../application/index.ts';
import type { WebhookSubscriptions } from '../../application/index.ts';

const ENVIRONMENT_KEY_ID = /^env:[0-9a-f]{12}$/;

/**
 * Runs `work` on the configured database's subscriptions (loaded only when a command runs). Only a create
 * may make the database; every other command acts on subscriptions that exist, so it refuses a missing one.
 */
async function withSubscriptions<T>(environment: ParsedArguments['environment'], work: (subscriptions: WebhookSubscriptions) => Promise<T>, creating = false): Promise<T> {
  const { withConfiguredDatabase, withExistingDatabase } = await import('./with-database.ts');
  const onStore = (store: { webhookSubscriptions: WebhookSubscriptions }) => work(store.webhookSubscriptions);
  return creating ? withConfiguredDatabase(environment, true, onStore) : withExistingDatabase(environment, onStore);
}

const NOTE = `Running services pick up a change within a third of PETSTORE_WEBHOOK_LEASE_MS (10 s by default). ${CONFIGURATION_NOTE}`;

/** `webhooks list | create | delete | resume`: the operator's view of every key's subscriptions (docs/webhooks.md). */
export const WEBHOOK_COMMANDS: Record<string, Command> = {
  'webhooks list': {
    summary: "list every key's webhook subscriptions and where their delivery stands (experimental)",
    help: [
      'petstore webhooks list [--status active|failing|disabled]',
      '',
      'Lists every subscription: id, owning key id, status, the log position delivered up to, failed attempts',
      'at the next event, the URL and the types (all: every type), and why the last attempt failed. Never a secret.',
      '',
      '  --status S   only subscriptions in this status: failing (retries ran out) and disabled (the receiver',
      '               answered 410 Gone) wait for `webhooks resume`',
      '',
      NOTE,
    ].join('\n'),
    options: { status: { type: 'string' } },
    async run({ options, environment }) {
      const status = options.status as string | undefined;
      if (status !== undefined && !(WEBHOOK_STATUSES as readonly string[]).includes(status)) {
        throw new UsageError(`--status must be one of ${WEBHOOK_STATUSES.join(', ')}, got ${JSON.stringify(status)}`, WEBHOOK_COMMANDS['webhooks list']!.help);
      }
      const subscriptions = (await withSubscriptions(environment, (table) => table.list())).filter((subscription) => status === undefined || subscription.status === status);
      if (subscriptions.length === 0) {
        process.stdout.write(status === undefined ? 'no webhook subscriptions\n' : `no ${status} webhook subscriptions\n`);
        return 0;
      }
      const [{ cloudEventTypeOf }] = await Promise.all([import('../../contract/event-feed.ts')]);
      const rows = [
        ['id', 'key', 'status', 'position', 'attempts', 'url', 'types', 'last error'],
        ...subscriptions.map((subscription) => [
          subscription.id, subscription.ownerKeyId, subscription.status, String(subscription.position), String(subscription.attempts), subscription.url,
          `${subscription.types?.map(cloudEventTypeOf).join(',') ?? 'all'}${subscription.petId ? ` (pet ${subscription.petId})` : ''}`,
          subscription.lastError ?? '',
        ]),
      ];
      printTable(rows);
      return 0;
    },
  },
  'webhooks create': {
    summary: 'subscribe a URL for an API key and print its signing secret, once (experimental)',
    help: [
      'petstore webhooks create --key-id ID --url URL [--type T]... [--pet-id N] [--batch-size N] [--max-per-second N]',
      '',
      'Creates a subscription owned by the API key with id ID (as keys list shows it, or env:… for a key from',
      'PETSTORE_API_KEYS as the request log names it) and prints its id and signing secret (the only time the',
      'secret is shown). The URL must reach a public address unless PETSTORE_WEBHOOKS_ALLOW_PRIVATE=true.',
      '',
      '  --type T     only events of this CloudEvents type (repeatable; default every type)',
      '  --pet-id N   only this pet\'s events',
      '  --batch-size N  up to N events per request, as a JSON array (1 to 100; default 1: each event alone)',
      '  --max-per-second N  at most N requests a second to the receiver (default: no limit)',
      '',
      NOTE,
    ].join('\n'),
    options: {
      'key-id': { type: 'string' }, url: { type: 'string' }, type: { type: 'string', multiple: true }, 'pet-id': { type: 'string' }, 'batch-size': { type: 'string' },
      'max-per-second': { type: 'string' },
    },
    async run({ options, environment }) {
      const help = WEBHOOK_COMMANDS['webhooks create']!.help;
      const keyId = options['key-id'] as string | undefined;
      const url = options.url as string | undefined;
      if (keyId === undefined || (parseDecimalInteger(keyId, 1) === undefined && !ENVIRONMENT_KEY_ID.test(keyId))) throw new UsageError(`--key-id must be a key id (digits, or env: and 12 hex digits), got ${JSON.stringify(keyId ?? '')}`, help);
      if (url === undefined) throw new UsageError('--url is required', help);
      const petIdText = options['pet-id'] as string | undefined;
      if (petIdText !== undefined && parseDecimalInteger(petIdText, 1) === undefined) throw new UsageError(`--pet-id must be a pet id in plain digits, got ${JSON.stringify(petIdText)}`, help);
      const batchText = options['batch-size'] as string | undefined;
      const [{ CLOUD_EVENT_TYPES, eventTypeNamed }, { MAX_WEBHOOK_BATCH, MAX_WEBHOOK_RATE }, { loadConfig }, { parseWebhookUrl, resolveSafeTarget, UnsafeWebhookTarget }] = await Promise.all([
        import('../../contract/event-feed.ts'), import('../../contract/webhooks.ts'), import('../config/config.ts'), import('../webhooks/safe-target.ts'),
      ]);
      if (batchText !== undefined && parseDecimalInteger(batchText, 1, MAX_WEBHOOK_BATCH) === undefined) {
        throw new UsageError(`--batch-size must be a whole number from 1 to ${MAX_WEBHOOK_BATCH}, got ${JSON.stringify(batchText)}`, help);
      }
      const rateText = options['max-per-second'] as string | undefined;
      if (rateText !== undefined && parseDecimalInteger(rateText, 1, MAX_WEBHOOK_RATE) === undefined) {
        throw new UsageError(`--max-per-second must be a whole number from 1 to ${MAX_WEBHOOK_RATE}, got ${JSON.stringify(rateText)}`, help);
      }
      const types = ((options.type as string[] | undefined) ?? []).map((name) => {
        const type = eventTypeNamed(name);
        if (type === undefined) throw new UsageError(`--type must be one of ${Object.values(CLOUD_EVENT_TYPES).join(', ')}, got ${JSON.stringify(name)}`, help);
        return type;
      });
      const { webhooks } = loadConfig(environment);
      try {
        await resolveSafeTarget(parseWebhookUrl(url), webhooks);
      } catch (error) {
        if (error instanceof UnsafeWebhookTarget) {
          // This command checks the URL itself, by its own environment; the service that delivers checks again by its own.
          const hint = ' (PETSTORE_WEBHOOKS_ALLOW_PRIVATE=true in this command\'s environment allows it, and the service delivering it needs the same setting, for development)';
          throw new UsageError(`${error.message}${error.privateAddress ? hint : ''}`, help);
        }
        throw error;
      }
      const { subscription, secret } = await withSubscriptions(environment, (table) =>
        table.create({ ownerKeyId: keyId, url, ...(types.length > 0 ? { types } : {}), ...(petIdText ? { petId: Number(petIdText) } : {}), ...(batchText ? { batchSize: Number(batchText) } : {}), ...(rateText ? { maxPerSecond: Number(rateText) } : {}) }, new Date(), webhooks.maxPerKey),
      true);
      process.stdout.write(`${subscription.id} ${secret}\n`);
      process.stderr.write(`created webhook ${subscription.id} for key ${keyId}, from log position ${subscription.position}; the secret is shown only now\n`);
      return 0;
    },
  },
  'webhooks delete': {
    summary: 'delete a webhook subscription by its id (experimental)',
    help: ['petstore webhooks delete <id>', '', 'Deletes the subscription: its delivery stops. Exits 1 when there is none with that id.', '', NOTE].join('\n'),
    arguments: ['id'],
    async run({ arguments: [id], environment }) {
      const deleted = await withSubscriptions(environment, (table) => table.delete(id!));
      if (!deleted) return noSuchWebhook(id!);
      process.stdout.write(`deleted webhook ${id}\n`);
      return 0;
    },
  },
  'webhooks resume': {
    summary: 'resume a failing or disabled webhook subscription (experimental)',
    help: [
      'petstore webhooks resume <id>',
      '',
      'Makes a failing or disabled subscription active again: delivery starts over at the event it stopped at, with fresh',
      'retries. Exits 1 when there is none with that id.',
      '',
      NOTE,
    ].join('\n'),
    arguments: ['id'],
    async run({ arguments: [id], environment }) {
      const resumed = await withSubscriptions(environment, (table) => table.resume(id!));
      if (!resumed) return noSuchWebhook(id!);
      process.stdout.write(`resumed webhook ${id}\n`);
      return 0;
    },
  },
  'webhooks attempts': {
    summary: "show a webhook subscription's recent delivery attempts, newest first (experimental)",
    help: [
      'petstore webhooks attempts <id> [--limit N]',
      '',
      'Shows the newest N attempts (default 20, at most 100): when, the webhook-id, the log positions carried,',
      "the receiver's status (- when it did not answer), the duration and the error. Each subscription keeps its",
      'newest 100 attempts, none older than 7 days. Exits 1 when there is no subscription with that id.',
      '',
      CONFIGURATION_NOTE,
    ].join('\n'),
    arguments: ['id'],
    options: { limit: { type: 'string' } },
    async run({ arguments: [id], options, environment }) {
      const { WEBHOOK_ATTEMPTS_KEPT } = await import('../../contract/webhooks.ts');
      const limitText = (options.limit as string | undefined) ?? '20';
      const limit = parseDecimalInteger(limitText, 1, WEBHOOK_ATTEMPTS_KEPT);
      if (limit === undefined) {
        throw new UsageError(`--limit must be a whole number from 1 to ${WEBHOOK_ATTEMPTS_KEPT}, got ${JSON.stringify(limitText)}`, WEBHOOK_COMMANDS['webhooks attempts']!.help);
      }
      const attempts = await withSubscriptions(environment, async (table) =>
        (await table.get(id!)) ? table.attempts(id!, { limit }, new Date()) : undefined,
      );
      if (attempts === undefined) return noSuchWebhook(id!);
      if (attempts.length === 0) {
        process.stdout.write('no attempts kept\n');
        return 0;
      }
      printTable([
        ['attempted at', 'webhook-id', 'positions', 'status', 'ms', 'error'],
        ...attempts.map((attempt) => [
          attempt.attemptedAt, attempt.messageId, attempt.positions.length > 1 ? `${attempt.positions[0]}..${attempt.positions.at(-1)}` : String(attempt.positions[0]),
          attempt.responseStatus === null ? '-' : String(attempt.responseStatus), String(attempt.durationMs), attempt.error ?? '',
        ]),
      ]);
      return 0;
    },
  },
  'webhooks replay': {
    summary: 'deliver every matching event after a log position again, then carry on live (experimental)',
    help: [
      'petstore webhooks replay <id> --after POSITION',
      '',
      'Delivers every matching event after log position POSITION again, in order, with the webhook-ids and',
      'bodies of the first time, then the new ones; the subscription becomes active with fresh retries.',
      "Exits 1 when there is no subscription with that id; 2 for a position past the log's end.",
      '',
      NOTE,
    ].join('\n'),
    arguments: ['id'],
    options: { after: { type: 'string' } },
    async run({ arguments: [id], options, environment }) {
      const help = WEBHOOK_COMMANDS['webhooks replay']!.help;
      const afterText = options.after as string | undefined;
      const after = afterText === undefined ? undefined : parseDecimalInteger(afterText);
      if (after === undefined) throw new UsageError(`--after must be a log position in plain digits, got ${JSON.stringify(afterText ?? '')}`, help);
      const outcome = await withSubscriptions(environment, (table) => table.replay(id!, after));
      if (outcome === 'past_log_end') throw new UsageError(`--after ${afterText} is past the end of the log`, help);
      if (outcome === 'no_subscription') return noSuchWebhook(id!);
      // The service delivering it learns of the replay at its next lease round, not at once.
      process.stdout.write(`replaying webhook ${id} after log position ${afterText}: a running service starts within a third of PETSTORE_WEBHOOK_LEASE_MS (10 s by default)\n`);
      return 0;
    },
  },
  'webhooks rotate-secret': {
    summary: "replace a webhook subscription's signing secret and print the new one, once (experimental)",
    help: [
      'petstore webhooks rotate-secret <id>',
      '',
      'Prints a new signing secret (the only time it is shown). For PETSTORE_WEBHOOK_SECRET_OVERLAP_MS (24 h by',
      'default) every delivery is signed with both the new and the old secret, so the receiver can switch at',
      'its pace. Exits 1 when there is no subscription with that id.',
      '',
      NOTE,
    ].join('\n'),
    arguments: ['id'],
    async run({ arguments: [id], environment }) {
      const { loadConfig } = await import('../config/config.ts');
      const { secretOverlapMs } = loadConfig(environment).webhooks;
      const now = new Date();
      const secret = await withSubscriptions(environment, (table) => table.rotateSecret(id!, now, secretOverlapMs));
      if (secret === undefined) return noSuchWebhook(id!);
      process.stdout.write(`${secret}\n`);
      process.stderr.write(`rotated the secret of webhook ${id}; the old one signs beside it until ${new Date(now.getTime() + secretOverlapMs).toISOString()}; the new one is shown only now\n`);
      return 0;
    },
  },
};

/** Exit status 1, said as the CLI's other refusals are. */
function noSuchWebhook(id: string): number {
  process.stderr.write(`petstore: no webhook ${id}\n`);
  return 1;
}
