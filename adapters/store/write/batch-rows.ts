import { aggregateOfStream } from '../../../application/index.ts';
import type { IdempotencyRecord, AppendResult, Created, NewAppend, ReadModelRow, RowChange, StreamAtVersion } from '../../../application/index.ts';
import type { AppendRows, NewEventRow, AppendRequest, Appended } from './append-plan.ts';
import type { IDEMPOTENCY_KEYS, ReadRow } from '../schema.ts';
import { streamPlaceOf } from '../schema.ts';
import { executeAppend, streamAtVersion } from './append-plan.ts';
import type { BatchTiming } from './write-observer.ts';

/** An append waiting for its batch: answered only once the batch has committed (or failed). */
export interface PendingAppend {
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((batch: BatchTiming) => void) | undefined;
}

/** A creation waiting for its batch: its append is built from the id the batch draws for it (from `sequence`), under the batch's lock. */
export interface PendingCreation {
  /** The aggregate whose sequence the id is drawn from. */
  readonly sequence: string;
  readonly build: (id: number, read: readonly StreamAtVersion[]) => NewAppend;
  /** The streams its decision reads, under the batch's lock (see `EventStore.create`). */
  readonly reads: readonly string[];
  readonly resolve: (result: Created) => void;
  readonly reject: (error: unknown) => void;
  readonly observed: ((batch: BatchTiming) => void) | undefined;
}

/** What waits for a batch: an append, or a creation whose id the batch draws. */
export type PendingWrite = PendingAppend | PendingCreation;

/** How many ids each sequence must give for the creations of `writes`, in the order the sequences are first met. */
export function creationsIn(writes: readonly PendingWrite[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const write of writes) if ('build' in write) counts.set(write.sequence, (counts.get(write.sequence) ?? 0) + 1);
  return counts;
}

/** A batch's writes as appends (`withIds`), how many ids of each sequence their creations took, and the refusals. */
export interface BuiltWrites {
  readonly appends: PendingAppend[];
  readonly used: ReadonlyMap<string, number>;
  /** The creations their decision refused, each answered with its refusal (by `appendAll`) once the batch commits. */
  readonly refused: (() => void)[];
}

/**
 * The batch's writes as appends, each creation built with the next id drawn from its sequence
 * (`ids(sequence, 0)`, `ids(sequence, 1)`, … in the order of the writes) and the streams it reads as
 * `rows` hold them (loaded by `BatchRows.toRead` of the writes). A build that throws (the decision
 * refused) refuses its creation alone and takes no id: the next creation gets it, and the backend
 * gives back the ids left over (`used`). The refusal waits for the commit, as every answer does: a batch
 * rolled back and run again decides afresh on what it reads then. An id whose append the plan refuses stays taken, as a refused
 * append's positions do. The new streams of the creations are added to `fresh`, when given: new,
 * since an id is never drawn twice.
 */
export function withIds(
  writes: readonly PendingWrite[], ids: (sequence: string, index: number) => number, rows: Pick<AppendRows, 'row' | 'streamVersion'>, fresh?: Set<string>,
): BuiltWrites {
  const appends: PendingAppend[] = [];
  const refused: (() => void)[] = [];
  const drawn = new Map<string, number>();
  for (const write of writes) {
    if (!('build' in write)) {
      appends.push(write);
      continue;
    }
    const index = drawn.get(write.sequence) ?? 0;
    const id = ids(write.sequence, index);
    let built: NewAppend;
    try {
      built = write.build(id, write.reads.map((streamId) => streamAtVersion(rows, streamId)));
      const first = built.streams[0];
      if (first?.expected !== 'no_stream') throw new Error('a creation\'s first stream must be a new one');
    } catch (error) {
      refused.push(() => write.reject(error));
      continue;
    }
    drawn.set(write.sequence, index + 1);
    fresh?.add(built.streams[0]!.streamId);
    appends.push({
      request: { streams: built.streams, metadata: built.metadata, options: built.options },
      resolve: (result) => write.resolve({ id, ...result }), // the new field first, as for an event row (`insertEvents`)
      reject: write.reject,
      observed: write.observed,
    });
  }
  return { appends, used: drawn, refused };
}

/** A batch of appends inside its transaction. */
export interface BatchTransaction {
  /**
   * The rows the appends read and write. They keep an append's writes aside until its last one
   * (`insertEvents`), so that an append the plan refuses leaves nothing behind (see `BatchRows`).
   */
  readonly rows: AppendRows;
  /** True for a fault of the machine or database: it fails the whole batch, not one append. */
  failsBatch(error: unknown): boolean;
}

/** What a batch did: each append's answer (to give once committed), the rows it changed, the types of its events, its last position. */
export interface BatchOutcome {
  readonly answers: (() => void)[];
  readonly changes: RowChange[];
  readonly types: string[];
  /** The last position appended, 0 when no append of the batch appended. */
  readonly last: number;
}

/**
 * Commit batching's core, for every backend: the appends of one batch (`withIds`), each executing the
 * append plan in the batch's transaction, so that a refused append (a version conflict, an idempotency
 * key taken) is rejected alone, having written nothing. A fault of the machine is thrown, to fail the batch.
 */
export function appendAll(batch: BatchTransaction, { appends, refused }: Pick<BuiltWrites, 'appends' | 'refused'>, now: Date): BatchOutcome {
  const answers: (() => void)[] = [...refused];
  const changes: RowChange[] = [];
  const types = new Set<string>();
  let last = 0;
  for (const write of appends) {
    let appended: Appended;
    try {
      appended = executeAppend(batch.rows, write.request, now);
    } catch (error) {
      if (batch.failsBatch(error)) throw error;
      answers.push(() => write.reject(error));
      continue;
    }
    changes.push(...appended.changes);
    for (const type of appended.types) types.add(type);
    last = Math.max(last, appended.position);
    answers.push(() => write.resolve({ version: appended.version, versions: appended.versions, position: appended.position }));
  }
  return { answers, changes, types: [...types], last };
}

/** What a batch's appends read, in one go under the batch's lock (so it sees every batch committed before). */
export interface BatchReads {
  /** Each stream read with its version (streams without events are absent). */
  readonly versions: readonly (readonly [string, number])[];
  /** The read-model rows read, by table; each row's `version` is its stream's. */
  readonly rows: Readonly<Record<string, readonly ReadModelRow[]>>;
  /** The scope and key of each live (unexpired) idempotency record read. */
  readonly remembered: readonly (readonly [string, string])[];
}

/**
 * What `BatchRows.toRead` asks to be read: the versions of streams that keep no read-model row, the rows
 * of those that do (by table: a row holds its stream's version), and whether records are live.
 */
export interface BatchReadsWanted {
  readonly streams: string[];
  /** The ids of the rows wanted, by table. */
  readonly rows: Map<string, number[]>;
  readonly scopes: string[];
  readonly keys: string[];
}

/** An event row with the position it was given. */
export interface PositionedEventRow extends NewEventRow {
  readonly position: number;
}

/** Everything a batch wrote, for the backend to store in a few statements. */
export interface BatchWrites {
  /** New read-model rows, and changed ones, by table. */
  readonly created: ReadonlyMap<string, readonly ReadModelRow[]>;
  readonly changed: ReadonlyMap<string, readonly ReadModelRow[]>;
  readonly events: readonly PositionedEventRow[];
  /** New idempotency records; each replaces an expired one with its scope and key. */
  readonly remembered: readonly ReadRow<typeof IDEMPOTENCY_KEYS>[];
}

const rememberKey = (scope: string, key: string) => JSON.stringify([scope, key]);

/** Values by read-model table and row id: a map a table, keyed by the id itself, so no key text is built for each look-up. */
class ByRow<T> {
  private readonly tables = new Map<string, Map<number, T>>();

  get(table: string, id: number): T | undefined {
    return this.tables.get(table)?.get(id);
  }

  set(table: string, id: number, value: T): void {
    const rows = this.tables.get(table);
    if (rows) rows.set(id, value);
    else this.tables.set(table, new Map([[id, value]]));
  }

  *values(): IterableIterator<T> {
    for (const rows of this.tables.values()) yield* rows.values();
  }
}

interface WrittenRow {
  readonly table: string;
  readonly row: ReadModelRow;
  readonly isNew: boolean;
}

/** What one append wrote, kept aside until its last write so that an append refused midway leaves nothing. */
interface AppendWrites {
  rows: WrittenRow[];
  remembered?: IdempotencyRecord;
}

/**
 * The rows a batch's appends see: what the batch read under its lock, overlaid with what its earlier
 * appends wrote (a later append to the same stream sees the earlier one). Writes are only collected,
 * for the backend to store at once (`writes`), so a batch costs a few statements however many
 * appends it holds, and an append the plan refuses has written nothing.
 */
export class BatchRows implements AppendRows {
  private readonly versions = new Map<string, number>();
  /** The stream of each read-model row asked for: the row read gives its version. */
  private readonly rowStreams = new ByRow<string>();
  private readonly read = new ByRow<ReadModelRow>();
  private readonly written = new ByRow<WrittenRow>();
  private readonly live = new Set<string>();
  /** The records asked about already (by `toRead`). */
  private readonly askedRecords = new Set<string>();
  private readonly events: PositionedEventRow[] = [];
  private readonly remembered: IdempotencyRecord[] = [];
  private pending: AppendWrites = { rows: [] };
  private drawn = 0;

  /** `positions`: the positions of the batch's events, in order, at least one for each event it may append. */
  constructor(private readonly positions: (index: number) => number) {}

  /**
   * Notes the streams known to be new (`freshStreams`, whose entries it takes; none when not given); says
   * what is to be read for the rest of the writes' streams (a creation's: those it reads), or undefined
   * when nothing is. What an earlier call asked for is not asked again: called once before the batch's
   * creations are built (`withIds`), then once with their appends.
   */
  toRead(batch: readonly PendingWrite[], freshStreams?: Set<string>): BatchReadsWanted | undefined {
    const streams: string[] = [];
    const rows = new Map<string, number[]>();
    const scopes: string[] = [];
    const keys: string[] = [];
    const ask = (streamId: string) => {
      if (freshStreams?.delete(streamId)) this.versions.set(streamId, 0);
      else if (!this.versions.has(streamId)) {
        // No events until the read says otherwise (it names only streams that have some).
        this.versions.set(streamId, 0);
        const found = aggregateOfStream(streamId);
        const table = found?.aggregate.readModel?.table;
        // A stream's read-model row is written in the commit of each of its events, at its version: the
        // row read says the version too, so its events are not looked up.
        if (table === undefined) streams.push(streamId);
        else {
          this.rowStreams.set(table, found!.id, streamId);
          const ids = rows.get(table);
          if (ids) ids.push(found!.id);
          else rows.set(table, [found!.id]);
        }
      }
    };
    for (const write of batch) {
      if (!('request' in write)) {
        write.reads.forEach(ask);
        continue;
      }
      for (const { streamId } of write.request.streams) ask(streamId);
      const record = write.request.options?.remember;
      if (record && !this.askedRecords.has(rememberKey(record.scope, record.key))) {
        this.askedRecords.add(rememberKey(record.scope, record.key));
        scopes.push(record.scope);
        keys.push(record.key);
      }
    }
    return streams.length === 0 && rows.size === 0 && keys.length === 0 ? undefined : { streams, rows, scopes, keys };
  }

  load(reads: BatchReads): void {
    for (const [stream, version] of reads.versions) this.versions.set(stream, version);
    for (const [table, rows] of Object.entries(reads.rows)) {
      for (const row of rows) {
        this.read.set(table, row.id as number, row);
        const streamId = this.rowStreams.get(table, row.id as number);
        if (streamId !== undefined) this.versions.set(streamId, row.version as number);
      }
    }
    for (const [scope, key] of reads.remembered) this.live.add(rememberKey(scope, key));
  }

  streamVersion(streamId: string): number {
    // Read first by each append: whatever a refused append before it set aside is dropped.
    if (this.pending.rows.length > 0 || this.pending.remembered) this.pending = { rows: [] };
    return this.versions.get(streamId) ?? 0;
  }

  row(table: string, id: number): ReadModelRow | undefined {
    const row = this.written.get(table, id)?.row ?? this.read.get(table, id);
    // A copy: the plan folds events into the row it is given.
    return row && { ...row };
  }

  remember(record: IdempotencyRecord): boolean {
    // Live records were read under the lock; expired ones are replaced by the write.
    if (this.live.has(rememberKey(record.scope, record.key))) return false;
    this.pending.remembered = record;
    return true;
  }

  writeRow(table: string, row: ReadModelRow, isNew: boolean): void {
    this.pending.rows.push({ table, row, isNew });
  }

  insertEvents(rows: readonly NewEventRow[]): number {
    const { rows: written, remembered } = this.pending;
    this.pending = { rows: [] };
    for (const { table, row, isNew } of written) {
      const id = row.id as number;
      this.written.set(table, id, { table, row, isNew: this.written.get(table, id)?.isNew ?? isNew });
    }
    if (remembered) {
      this.live.add(rememberKey(remembered.scope, remembered.key));
      this.remembered.push(remembered);
    }
    let position = 0;
    for (const row of rows) {
      position = this.positions(this.drawn++);
      // The new field before the spread: `{ ...row, position }` leaves V8 a slow object, about 0.6 µs an event to build and read.
      this.events.push({ position, ...row });
      this.versions.set(...streamPlaceOf(row));
    }
    return position;
  }

  /** What the batch's appends wrote, each row once in its last state. */
  writes(): BatchWrites {
    const created = new Map<string, ReadModelRow[]>();
    const changed = new Map<string, ReadModelRow[]>();
    for (const { table, row, isNew } of this.written.values()) {
      const into = isNew ? created : changed;
      const rows = into.get(table);
      if (rows) rows.push(row);
      else into.set(table, [row]);
    }
    const remembered = this.remembered.map((record) => ({
      scope: record.scope, idempotency_key: record.key, fingerprint: record.fingerprint, answer: JSON.stringify(record.answer), expires_at: record.expiresAt,
    }));
    return { created, changed, events: this.events, remembered };
  }
}
