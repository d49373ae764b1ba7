import { CONFIGURATION_NOTE } from './command.ts';
import type { Command } from './command.ts';

const EVENTS_TAIL_HELP = `petstore events tail [--after N] [--type T]... [--json]

Prints the log of changes as it grows, one line per event: its position, when it was recorded, its
CloudEvents type, the pet and the data; with --json each event as the feed's CloudEvents JSON. First
the events after --after (default 0, the whole log), then each new commit of any process or instance
on the database, until SIGINT or SIGTERM. --type (repeatable) keeps only events of that CloudEvents
type, e.g. com.petstore.pet.status-changed.v1 (docs/event-feed.md). ${CONFIGURATION_NOTE}`;

/** The command's line; what it runs is loaded only when it runs. */
export const EVENTS_TAIL: Command = {
  summary: 'print the log of changes as it grows (experimental)',
  help: EVENTS_TAIL_HELP,
  options: { after: { type: 'string' }, type: { type: 'string', multiple: true }, json: { type: 'boolean' } },
  async run(parsed) {
    const { tailEvents } = await import('./events-tail.ts');
    return tailEvents(parsed);
  },
};
