import type { Logger } from 'pino';

/** How often a fault that keeps happening is summarised in the log. */
const SUMMARY_EVERY_MS = 60_000;

/**
 * Logs each fault (told apart by its message) the first time it is seen, then only counts its repeats
 * and writes their number at most once a minute: a full disk under load writes a few lines, not one
 * stack per request. A fault seen again after a quiet spell is logged afresh. `consequence` says what
 * the fault stops meanwhile.
 */
export function createRepeatedFaultLog(
  logger: Logger,
  now: () => number = () => performance.now(),
  consequence = 'answering 503 while it lasts',
): (fault: Error) => void {
  const seen = new Map<string, { firstSeen: number; lastLogged: number; repeats: number }>();
  return (fault) => {
    const at = now();
    const cause = (fault.cause as { code?: unknown } | undefined)?.code;
    const code = typeof cause === 'string' ? cause : undefined;
    const known = seen.get(fault.message);
    if (known === undefined || at - known.lastLogged > 2 * SUMMARY_EVERY_MS) {
      if (seen.size > 100) seen.clear();
      seen.set(fault.message, { firstSeen: at, lastLogged: at, repeats: 0 });
      logger.error({ fault: fault.message, ...(code ? { code } : {}) }, `storage fault: ${consequence}; repeats are counted`);
      return;
    }
    known.repeats += 1;
    if (at - known.lastLogged >= SUMMARY_EVERY_MS) {
      logger.warn({ fault: fault.message, repeats: known.repeats, sinceSeconds: Math.round((at - known.firstSeen) / 1000) }, 'storage fault: repeated');
      known.lastLogged = at;
      known.repeats = 0;
    }
  };
}
