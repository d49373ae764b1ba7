/** The benchmark's goals, read by the scenarios that measure them and by the report that judges them. */
/** Peak resident memory, in MiB: over the side-by-side rounds and serving the largest catalogue. */
export const RSS_LIMIT_MB = 120;
export const LIST_RATIO_LIMIT = 1.3;
export const REBUILD_EVENTS_PER_SECOND = 300_000;
/** The event feed's goals. */
export const CATCH_UP_EVENTS_PER_SECOND = 200_000;
export const LIVE_P99_MS = { sqlite: 10, postgres: 100 } as const;
export const IDLE_STREAMS_MIB = 50;
/** Webhook delivery's goals: a backlog to one fast receiver, and each event's 201 to its delivery. */
export const WEBHOOK_EVENTS_PER_SECOND = 5_000;
export const WEBHOOK_P99_MS = 50;

/** A count as the report writes it: 1M, 20k, 1,234. */
export function count(value: number): string {
  if (value >= 1_000_000 && value % 1_000_000 === 0) return `${value / 1_000_000}M`;
  if (value >= 1000 && value % 1000 === 0) return `${value / 1000}k`;
  return value.toLocaleString('en-US');
}
