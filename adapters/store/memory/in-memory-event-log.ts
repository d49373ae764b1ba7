import type { EventLog, LogQuery, StoredEvent } from '../../../application/index.ts';

/** The log by position over the events held in memory, where position n is at index n - 1. */
export function createInMemoryEventLog(log: readonly StoredEvent[]): EventLog {
  return {
    async readLog({ after, limit, types, streamId, through }: LogQuery): Promise<StoredEvent[]> {
      const page: StoredEvent[] = [];
      const end = Math.min(log.length, through ?? log.length);
      for (let index = Math.max(0, after); index < end && page.length < limit; index++) {
        const stored = log[index]!;
        if (types !== undefined && !types.includes(stored.event.type)) continue;
        if (streamId !== undefined && stored.streamId !== streamId) continue;
        page.push(stored);
      }
      return page;
    },
    end: async () => log.length,
  };
}
