import { CLOUD_EVENT_TYPES } from '../../contract/event-feed.ts';
import { NotAHistory } from './history.ts';

/** A pet's status as the log tells it; null: none. */
export type Status = string | null;

/** One event of the final log, read as the pet store's model of it. */
export interface LogEvent {
  readonly position: number;
  readonly petId: number;
  readonly kind: 'added' | 'status-changed';
  /** The pet's version once this event is applied: how many of its events the log holds up to here. */
  readonly version: number;
  /** The added pet's name and category; the changed status's `from`. */
  readonly name?: string;
  readonly categoryId?: number;
  readonly from?: Status;
  /** The pet's status once this event is applied. */
  readonly status: Status;
  /** The event exactly as the log served it. */
  readonly served: Readonly<Record<string, unknown>>;
  /** The store order whose commit moved the pet (its own operations write it, not the pet's). */
  readonly orderId?: number;
}

/** What a pet was at one position: absent, or present at a version with a status. */
export interface PetAt {
  readonly present: boolean;
  readonly version: number;
  readonly status: Status;
  readonly name?: string | undefined;
  readonly categoryId?: number | undefined;
}

export interface PetLog {
  readonly events: readonly LogEvent[];
  readonly byPosition: ReadonlyMap<number, LogEvent>;
  /** Every event of the log as served, whatever its aggregate, by position (the pets' are also in `byPosition`). */
  readonly served: ReadonlyMap<number, Readonly<Record<string, unknown>>>;
  /** Each pet's events in position order. */
  readonly pets: ReadonlyMap<number, readonly LogEvent[]>;
  /** The pet as of every event at or before `position`. */
  petAt(petId: number, position: number): PetAt;
  /** Every status a pet held at or after `position` (its status at `position` included). */
  statusesFrom(petId: number, position: number): Set<Status>;
}

/** The position a served event names: its `id` read as an integer, or undefined when it is not one. */
export function positionOf(event: unknown): number | undefined {
  const id = (event as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' || !/^[1-9][0-9]*$/.test(id)) return undefined;
  const position = Number(id);
  return Number.isSafeInteger(position) ? position : undefined;
}

function petIdOf(subject: unknown): number | undefined {
  const match = typeof subject === 'string' ? /^pets\/([1-9][0-9]*)$/.exec(subject) : null;
  return match ? Number(match[1]) : undefined;
}

/**
 * Reads the final log. Its events are the reference every check compares with, so an event it cannot
 * read makes the file not a history; events out of position order are kept in the order served.
 */
export function readPetLog(served: unknown): PetLog {
  if (!Array.isArray(served)) throw new NotAHistory('the log op\'s ok value has no events array');
  const events: LogEvent[] = [];
  const byPosition = new Map<number, LogEvent>();
  const servedByPosition = new Map<number, Readonly<Record<string, unknown>>>();
  const pets = new Map<number, LogEvent[]>();
  served.forEach((raw: unknown, at) => {
    const where = `log event ${at}`;
    const position = positionOf(raw);
    const event = raw as Record<string, unknown>;
    const petId = petIdOf(event?.subject);
    const data = event?.data as Record<string, unknown> | undefined;
    const subject = typeof event?.subject === 'string' ? event.subject : '';
    if (position === undefined || !/^[a-z][a-z/-]*\/[1-9][0-9]*$/.test(subject) || typeof data !== 'object' || data === null) {
      throw new NotAHistory(`${where} is not an event with a position, a {collection}/{id} subject and data`);
    }
    if (servedByPosition.has(position)) throw new NotAHistory(`${where}: position ${position} appears twice in the log`);
    servedByPosition.set(position, event);
    // Another aggregate's event: its own log reads it (the store's orders: `store-log.ts`).
    if (petId === undefined) {
      if (event.type === CLOUD_EVENT_TYPES.PetAdded || event.type === CLOUD_EVENT_TYPES.PetStatusChanged) throw new NotAHistory(`${where}: a pet event without a pets/{id} subject`);
      return;
    }
    const own = pets.get(petId) ?? [];
    const version = own.length + 1;
    let logEvent: LogEvent;
    if (event.type === CLOUD_EVENT_TYPES.PetAdded) {
      logEvent = {
        position, petId, kind: 'added', version, status: (data.status ?? null) as Status, served: event,
        ...(typeof data.name === 'string' ? { name: data.name } : {}),
        ...(typeof data.categoryId === 'number' ? { categoryId: data.categoryId } : {}),
      };
    } else if (event.type === CLOUD_EVENT_TYPES.PetStatusChanged) {
      const to = data.to;
      if (typeof to !== 'string') throw new NotAHistory(`${where}: a status change without a status`);
      logEvent = {
        position, petId, kind: 'status-changed', version, from: (data.from ?? null) as Status, status: to, served: event,
        ...(Number.isSafeInteger(data.orderId) ? { orderId: data.orderId as number } : {}),
      };
    } else {
      throw new NotAHistory(`${where}: unknown event type ${String(event.type)}`);
    }
    events.push(logEvent);
    byPosition.set(position, logEvent);
    own.push(logEvent);
    pets.set(petId, own);
  });

  /** How many of the pet's events are at or before `position`. */
  const countUpTo = (own: readonly LogEvent[], position: number): number => {
    let low = 0;
    let high = own.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (own[middle]!.position <= position) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const added = (own: readonly LogEvent[]) => own.find((event) => event.kind === 'added');

  return {
    events,
    byPosition,
    served: servedByPosition,
    pets,
    petAt(petId, position) {
      const own = pets.get(petId) ?? [];
      const count = countUpTo(own, position);
      if (count === 0) return { present: false, version: 0, status: null };
      const first = added(own);
      return { present: true, version: count, status: own[count - 1]!.status, name: first?.name, categoryId: first?.categoryId };
    },
    statusesFrom(petId, position) {
      const own = pets.get(petId) ?? [];
      const count = countUpTo(own, position);
      const statuses = new Set<Status>();
      if (count > 0) statuses.add(own[count - 1]!.status);
      for (const event of own.slice(count)) statuses.add(event.status);
      return statuses;
    },
  };
}
