import type { IdempotencyRecord, AppendResult, Created, NewStream, PetChange } from '../../application/index.ts';
import type { AppendRows, NewEventRow, AppendRequest, Appended } from './append-plan.ts';
import type { PetRow, IDEMPOTENCY_KEYS, ReadRow } from './schema.ts';
import { streamPlaceOf } from './schema.ts';
import { executeAppend } from './append-plan.ts';
import type { GroupTiming } from './write-observer.ts';

/** An append waiting for its group: answered only once the group has committed (or failed). */
export interface PendingAppend {
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((group: GroupTiming) => void) | undefined;
}

/** A creation waiting for its group: its append is built from the id the group draws for it, under the group's lock. */
export interface PendingCreation {
  readonly build: (id: number) => NewStream;
  readonly resolve: (result: Created) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((group: GroupTiming) => void) | undefined;
}

/** What waits for a group: an append, or a creation whose id the group draws. */
export type PendingWrite = PendingAppend | PendingCreation;

/** How many of `writes` are creations: the ids a group draws. */
export function creationsIn(writes: readonly PendingWrite[]): number {
  let count = 0;
  for (const write of writes) if ('build' in write) count += 1;
  return count;
}

/**
 * The group's writes as appends, each creation built with the next id drawn (`ids(0)`, `ids(1)`, … in
 * the order of the writes). A build that throws refuses its creation alone; its id stays taken, as a
 * refused append's does. The streams of the creations are added to `fresh`, when given: new, since an
 * id is never drawn twice.
 */
export function withIds(writes: readonly PendingWrite[], ids: (index: number) => number, fresh?: Set<string>): PendingAppend[] {
  const appends: PendingAppend[] = [];
  let drawn = 0;
  for (const write of writes) {
    if (!('build' in write)) {
      appends.push(write);
      continue;
    }
    const id = ids(drawn++);
    let stream: NewStream;
    try {
      stream = write.build(id);
    } catch (error) {
      write.reject(error);
      continue;
    }
    fresh?.add(stream.streamId);
    appends.push({
      request: { ...stream, expected: 'no_stream' },
      resolve: (result) => write.resolve({ ...result, id }),
      reject: write.reject,
      observed: write.observed,
    });
  }
  return appends;
}

/** A group of appends inside its transaction. */
export interface GroupTransaction {
  /**
   * The rows the appends read and write. They keep an append's writes aside until its last one
   * (`insertEvents`), so that an append the plan refuses leaves nothing behind (see `GroupRows`).
   */
  readonly rows: AppendRows;
  /** True for a fault of the machine or database: it fails the whole group, not one append. */
  failsGroup(error: unknown): boolean;
}

/** What a group did: each append's answer (to give once committed), the pets it changed, its last position. */
export interface GroupOutcome {
  readonly answers: (() => void)[];
  readonly changes: PetChange[];
  /** The last position appended, 0 when no append of the group appended. */
  readonly last: number;
}

/**
 * Group commit's core, for every backend that batches: the appends of one group, each executing the
 * append plan in the group's transaction, so that a refused append (a version conflict, an idempotency
 * key taken) is rejected alone, having written nothing. A fault of the machine is thrown, to fail the group.
 */
export function appendAll(group: GroupTransaction, batch: readonly PendingAppend[], now: Date): GroupOutcome {
  const answers: (() => void)[] = [];
  const changes: PetChange[] = [];
  let last = 0;
  for (const write of batch) {
    let appended: Appended;
    try {
      appended = executeAppend(group.rows, write.request, now);
    } catch (error) {
      if (group.failsGroup(error)) throw error;
      answers.push(() => write.reject(error));
      continue;
    }
    if (appended.change) changes.push(appended.change);
    last = Math.max(last, appended.position);
    answers.push(() => write.resolve({ version: appended.version, position: appended.position }));
  }
  return { answers, changes, last };
}

/** What a group's appends read, in one go under the group's lock (so it sees every group committed before). */
export interface GroupReads {
  /** Each stream read with its version (streams without events are absent). */
  readonly versions: readonly (readonly [string, number])[];
  readonly pets: readonly PetRow[];
  /** The scope and key of each live (unexpired) idempotency record read. */
  readonly remembered: readonly (readonly [string, string])[];
}

/** What `GroupRows.toRead` asks to be read: streams' versions, pet rows, and whether records are live. */
export interface GroupReadsWanted {
  readonly streams: string[];
  readonly petIds: number[];
  readonly scopes: string[];
  readonly keys: string[];
}

/** An event row with the position it was given. */
export interface PositionedEventRow extends NewEventRow {
  readonly position: number;
}

/** Everything a group wrote, for the backend to store in a few statements. */
export interface GroupWrites {
  readonly createdPets: readonly PetRow[];
  readonly changedPets: readonly PetRow[];
  readonly events: readonly PositionedEventRow[];
  /** New idempotency records; each replaces an expired one with its scope and key. */
  readonly remembered: readonly ReadRow<typeof IDEMPOTENCY_KEYS>[];
}

const rememberKey = (scope: string, key: string) => JSON.stringify([scope, key]);

/** What one append wrote, kept aside until its last write so that an append refused midway leaves nothing. */
interface AppendWrites {
  pet?: { row: PetRow; isNew: boolean };
  remembered?: IdempotencyRecord;
}

/**
 * The rows a group's appends see: what the group read under its lock, overlaid with what its earlier
 * appends wrote (a later append to the same stream sees the earlier one). Writes are only collected,
 * for the backend to store at once (`writes`), so a group costs a few statements however many
 * appends it holds, and an append the plan refuses has written nothing.
 */
export class GroupRows implements AppendRows {
  private readonly versions = new Map<string, number>();
  private readonly pets = new Map<number, PetRow>();
  private readonly written = new Map<number, { row: PetRow; isNew: boolean }>();
  private readonly live = new Set<string>();
  private readonly events: PositionedEventRow[] = [];
  private readonly remembered: IdempotencyRecord[] = [];
  private pending: AppendWrites = {};
  private drawn = 0;

  /** `positions`: the positions of the group's events, in order, at least one for each event it may append. */
  constructor(private readonly positions: (index: number) => number) {}

  /**
   * Notes the streams known to be new (`freshStreams`, whose entries it takes; none when not given); says
   * what is to be read for the rest, or undefined when nothing is.
   */
  toRead(batch: readonly PendingAppend[], freshStreams?: Set<string>): GroupReadsWanted | undefined {
    const streams = new Set<string>();
    const petIds: number[] = [];
    const scopes: string[] = [];
    const keys: string[] = [];
    for (const { request } of batch) {
      if (freshStreams?.delete(request.streamId)) this.versions.set(request.streamId, 0);
      else if (!this.versions.has(request.streamId) && !streams.has(request.streamId)) {
        streams.add(request.streamId);
        const petId = request.events[0]?.data.id;
        if (petId !== undefined) petIds.push(petId);
      }
      const record = request.options.remember;
      if (record) {
        scopes.push(record.scope);
        keys.push(record.key);
      }
    }
    return streams.size === 0 && keys.length === 0 ? undefined : { streams: [...streams], petIds, scopes, keys };
  }

  load(reads: GroupReads): void {
    for (const [stream, version] of reads.versions) this.versions.set(stream, version);
    for (const row of reads.pets) this.pets.set(row.id, row);
    for (const [scope, key] of reads.remembered) this.live.add(rememberKey(scope, key));
  }

  streamVersion(streamId: string): number {
    // The first call of each append: whatever a refused append before it set aside is dropped.
    this.pending = {};
    return this.versions.get(streamId) ?? 0;
  }

  petRow(id: number): PetRow | undefined {
    const row = this.written.get(id)?.row ?? this.pets.get(id);
    // A copy: the plan folds events into the row it is given.
    return row && { ...row };
  }

  remember(record: IdempotencyRecord): boolean {
    // Live records were read under the lock; expired ones are replaced by the write.
    if (this.live.has(rememberKey(record.scope, record.key))) return false;
    this.pending.remembered = record;
    return true;
  }

  writePet(row: PetRow, isNew: boolean): void {
    this.pending.pet = { row, isNew };
  }

  insertEvents(rows: readonly NewEventRow[]): number {
    const { pet, remembered } = this.pending;
    this.pending = {};
    if (pet) this.written.set(pet.row.id, { row: pet.row, isNew: this.written.get(pet.row.id)?.isNew ?? pet.isNew });
    if (remembered) {
      this.live.add(rememberKey(remembered.scope, remembered.key));
      this.remembered.push(remembered);
    }
    let position = 0;
    for (const row of rows) {
      position = this.positions(this.drawn++);
      this.events.push({ ...row, position });
      this.versions.set(...streamPlaceOf(row));
    }
    return position;
  }

  /** What the group's appends wrote, each pet's row once in its last state. */
  writes(): GroupWrites {
    const createdPets: PetRow[] = [];
    const changedPets: PetRow[] = [];
    for (const { row, isNew } of this.written.values()) (isNew ? createdPets : changedPets).push(row);
    const remembered = this.remembered.map((record) => ({
      scope: record.scope, idempotency_key: record.key, fingerprint: record.fingerprint, pet: JSON.stringify(record.pet), expires_at: record.expiresAt,
    }));
    return { createdPets, changedPets, events: this.events, remembered };
  }
}
