import { isDeepStrictEqual } from 'node:util';
import { PostgresAdapter, sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { PetEvent } from '../../domain/index.ts';
import { foldEvents, PET_AGGREGATE } from '../../application/index.ts';
import type { PetStoreDatabase } from '../../adapters/store/schema.ts';

export interface ProjectionReport {
  readonly events: number;
  readonly streams: number;
  readonly pets: number;
  /** One line per difference between the `pets` table and a fold of the log; empty when they agree. */
  readonly problems: readonly string[];
}

/**
 * Replays the whole `events` log through the application's projection and compares the result with
 * the `pets` table row by row: every field, the version, and the created/updated times. Also checks
 * that each stream's versions run 1, 2, 3… and that the id sequence is past every pet id.
 */
export async function verifyProjection(db: Kysely<PetStoreDatabase>): Promise<ProjectionReport> {
  const events = await db.selectFrom('events').selectAll().orderBy('position').execute();
  const rows = await db.selectFrom('pets').selectAll().orderBy('id').execute();
  const sequence = await petIdSequence(db);
  const problems: string[] = [];

  const streams = new Map<string, typeof events>();
  for (const event of events) {
    const stream = streams.get(event.stream_id) ?? [];
    stream.push(event);
    streams.set(event.stream_id, stream);
  }

  const expected = new Map<number, { name: string; category_id: number; status: string | null; version: number; created_at: string; updated_at: string }>();
  for (const [streamId, stream] of streams) {
    // Other aggregates' streams have read models of their own.
    if (!streamId.startsWith(PET_AGGREGATE.streamPrefix)) continue;
    const versions = stream.map((event) => event.stream_version);
    if (versions.some((version, index) => version !== index + 1)) problems.push(`${streamId}: versions ${versions.join(',')} do not run 1, 2, 3…`);
    const decoded = stream.map((event) => ({ type: event.type, data: JSON.parse(event.data) }) as PetEvent);
    let projected;
    try {
      const state = foldEvents(PET_AGGREGATE, decoded);
      if (state.kind !== 'present') throw new Error('projection reached a pet that does not exist');
      projected = { pet: state.pet, version: stream.length };
    } catch (error) {
      problems.push(`${streamId}: the log does not fold: ${(error as Error).message}`);
      continue;
    }
    if (`pet-${projected.pet.id}` !== streamId) problems.push(`${streamId}: its events describe pet ${projected.pet.id}`);
    expected.set(projected.pet.id, {
      name: projected.pet.name,
      category_id: projected.pet.categoryId,
      status: projected.pet.status ?? null,
      version: projected.version,
      created_at: stream[0]!.recorded_at,
      updated_at: stream.at(-1)!.recorded_at,
    });
  }

  for (const row of rows) {
    const want = expected.get(row.id);
    if (!want) {
      problems.push(`pets row ${row.id} has no events`);
      continue;
    }
    const { id, ...have } = row;
    if (!isDeepStrictEqual({ ...have }, want)) problems.push(`pets row ${id} is ${JSON.stringify(have)}, the log says ${JSON.stringify(want)}`);
    expected.delete(row.id);
  }
  for (const id of expected.keys()) problems.push(`pet ${id} is in the log but not in the pets table`);
  const highest = rows.at(-1)?.id ?? 0;
  if ((sequence?.value ?? 0) < highest) problems.push(`the id sequence is at ${sequence?.value}, below pet ${highest}`);

  return { events: events.length, streams: streams.size, pets: rows.length, problems };
}

/** The last pet id handed out: PostgreSQL's `pet_ids` sequence, SQLite's `sequences` row. */
async function petIdSequence(db: Kysely<PetStoreDatabase>): Promise<{ value: number } | undefined> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const { rows } = await sql<{ value: number; is_called: boolean }>`select last_value as value, is_called from pet_ids`.execute(db);
    return { value: rows[0]!.is_called ? Number(rows[0]!.value) : 0 };
  }
  return db.selectFrom('sequences').select('value').where('name', '=', 'pet_id').executeTakeFirst();
}
