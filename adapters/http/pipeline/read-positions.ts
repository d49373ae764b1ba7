import type { EventLog } from '../../../application/index.ts';
import { parseDecimalInteger } from '../../../contract/decimal-integer.ts';
import { HttpProblem } from './errors.ts';

/** On every write's answer: the log position of its commit. */
export const POSITION_HEADER = 'Petstore-Position';
/** On a read: answer from a state that includes at least this log position. */
export const MIN_POSITION_HEADER = 'Petstore-Min-Position';

/** How long a read waits for a position the database has not reached, before it answers 503. */
export const POSITION_WAIT_MS = 1000;
const FIRST_RECHECK_MS = 5;

/**
 * The log position this instance's reads are known to include, and the way to reach a newer one.
 * A position comes back from a client that wrote it, possibly through another instance: it is committed
 * there, and the check here makes that explicit (and bounded) rather than assumed.
 */
export interface ReadPositions {
  /** Every read answered from now on (cache included) includes every position up to this one. */
  readonly reached: number;
  /** A commit of this instance's own, already reported to its caches. */
  observe(position: number): void;
  /** Resolves once reads include `position`; throws a 503 `unavailable` when the log has not reached it in time. */
  reach(position: number): Promise<void>;
}

export interface ReadPositionsOptions {
  readonly log: Pick<EventLog, 'readLog'>;
  /**
   * The highest position committed to the log, as the database holds it now, whether or not reads see
   * it yet. A read asking for more is refused at once: no write has been acknowledged with that position.
   * Without it, such a read waits like any other and gets 503.
   */
  readonly logEnd?: (() => Promise<number>) | undefined;
  /** Makes the caches take in every commit visible now (the listing cache's look at the file). */
  readonly refresh: () => void;
  readonly waitMs?: number;
}

export function createReadPositions({ log, logEnd, refresh, waitMs = POSITION_WAIT_MS }: ReadPositionsOptions): ReadPositions {
  let reached = 0;
  /**
   * Whether the log has reached `position`: the first committed event at or past it, one look-up by the
   * log's key. Read the log, then refresh: every commit up to the one found is visible, so the caches
   * hold it too. Reads that arrive while a look-up runs, asking for its position or an older one, share it.
   */
  let pending: { readonly position: number; readonly reachedIt: Promise<boolean> } | undefined;
  const lookUp = (position: number): Promise<boolean> => {
    if (pending !== undefined && pending.position >= position) return pending.reachedIt;
    const own = {
      position,
      reachedIt: log.readLog({ after: position - 1, limit: 1 }).then(([first]) => {
        if (first === undefined) return false;
        refresh();
        if (first.position > reached) reached = first.position;
        return true;
      }),
    };
    pending = own;
    const done = () => {
      if (pending === own) pending = undefined;
    };
    own.reachedIt.then(done, done);
    return own.reachedIt;
  };

  /** A position past every committed one is the client's mistake; an end that cannot be read leaves the read to wait. */
  const refusePastTheEnd = async (position: number): Promise<void> => {
    const end = await logEnd?.().catch(() => undefined);
    if (end !== undefined && position > end) {
      throw new HttpProblem('invalid_header', `${MIN_POSITION_HEADER} ${position} is past the end of the log, position ${end}: no write has been given it`);
    }
  };

  return {
    get reached() {
      return reached;
    },
    observe(position) {
      if (position > reached) reached = position;
    },
    async reach(position) {
      if (position <= reached) return;
      let pause = FIRST_RECHECK_MS;
      for (let waited = 0; ; waited += pause, pause *= 2) {
        if (await lookUp(position)) return;
        if (waited === 0) await refusePastTheEnd(position);
        if (waited >= waitMs) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause, waitMs - waited)));
      }
      throw new HttpProblem('unavailable', `the log has not reached position ${position} yet; try again`, { 'Retry-After': '1' });
    },
  };
}

/**
 * The position a read asks for: decimal digits naming a safe integer, or none (undefined). Anything
 * else is a 400 `invalid_header`, returned here (for the cached listing, which leaves it to the app).
 */
export function minPositionOf(header: string | string[] | undefined): number | undefined | HttpProblem {
  if (header === undefined) return undefined;
  const position = typeof header === 'string' ? parseDecimalInteger(header) : undefined;
  if (position === undefined) return new HttpProblem('invalid_header', `${MIN_POSITION_HEADER} must be one log position: decimal digits without a leading zero, at most 2^53-1`);
  return position;
}

/** Like `minPositionOf`, throwing the 400. */
export function parseMinPosition(header: string | string[] | undefined): number | undefined {
  const position = minPositionOf(header);
  if (position instanceof HttpProblem) throw position;
  return position;
}

/** Node's (lower-case) name of the request header. */
export const MIN_POSITION_FIELD = MIN_POSITION_HEADER.toLowerCase();
