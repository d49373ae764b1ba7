import { followLog } from '../../application/index.ts';
import { parseDecimalInteger } from '../../contract/decimal-integer.ts';
import { CLOUD_EVENT_TYPES, cloudEventTypeOf, eventTypeNamed } from '../../contract/event-feed.ts';
import { loadConfig, localBaseUrl } from '../config/config.ts';
import { cloudEventJson, subjectOf } from '../../contract/cloud-events.ts';
import { UsageError } from './command.ts';
import type { ParsedArguments } from './command.ts';
import { requireExistingDatabase, withDatabase } from './with-database.ts';

/** Events read at a time while catching up. */
const PAGE_EVENTS = 1000;
/** A tail prints nothing while the log is quiet: the follower's idle cue is ignored, so it may come rarely. */
const IDLE_MS = 3_600_000;

/** `petstore events tail`: follows the log on the configured database and prints it. */
export async function tailEvents({ options, environment }: ParsedArguments): Promise<number> {
  const afterText = (options.after as string | undefined) ?? '0';
  if (parseDecimalInteger(afterText) === undefined) {
    throw new UsageError(`--after must be a log position in plain digits, got ${JSON.stringify(afterText)}`);
  }
  const types: string[] = [];
  for (const name of (options.type as string[] | undefined) ?? []) {
    const type = eventTypeNamed(name);
    if (type === undefined) throw new UsageError(`--type must be one of ${Object.values(CLOUD_EVENT_TYPES).join(', ')}, got ${JSON.stringify(name)}`);
    types.push(type);
  }
  const config = loadConfig(environment);
  requireExistingDatabase(config.database);
  const source = config.publicBaseUrl ?? localBaseUrl(config.host, config.port);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await withDatabase(config.database, false, async (store) => {
      const from = { after: Number(afterText), ...(types.length > 0 ? { types } : {}) };
      for await (const page of followLog(store, from, { pageSize: PAGE_EVENTS, idleMs: IDLE_MS, signal: stop.signal })) {
        let text = '';
        for (const stored of page) {
          text += options.json
            ? `${cloudEventJson(stored, source)}\n`
            : `${stored.position} ${stored.metadata.recordedAt} ${cloudEventTypeOf(stored.event.type)} ${subjectOf(stored.streamId)} ${JSON.stringify(stored.event.data)}\n`;
        }
        if (text !== '' && !process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}
