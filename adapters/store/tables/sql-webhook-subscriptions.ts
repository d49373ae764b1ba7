import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import type { PetEvent } from '../../../domain/index.ts';
import { WEBHOOK_STATUSES, WebhookLimitReached } from '../../../application/index.ts';
import type {
  DeliveryRun, FailedAttempt, HeldLease, NewWebhookAttempt, NewWebhookSubscription, WebhookDeliveryState, WebhookStatus, WebhookSubscription, WebhookSubscriptions,
} from '../../../application/index.ts';
import { WEBHOOK_ATTEMPTS_KEPT, WEBHOOK_ATTEMPTS_KEPT_MS } from '../../../contract/webhooks.ts';
import { translated } from '../sql-dialect.ts';
import type { PetStoreDatabase, WebhooksTable } from '../schema.ts';
import type { SqlDatabase } from '../sql-pet-store.ts';
import { readLogEnd } from '../sql-event-log.ts';

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Subscriptions and their delivery state in the `webhooks` table, the same queries on SQLite and PostgreSQL. */
export function createSqlWebhookSubscriptions(store: SqlDatabase): WebhookSubscriptions & WebhookDeliveryState {
  const { db, dialect } = store;
  const run = <T>(work: () => Promise<T>) => translated(dialect, work);
  // Delivery writes change no pet and no event: on SQLite they must not look like a commit that might have.
  const writeOutsideLog = store.writeOutsideLog ?? (<T>(work: (on: Kysely<PetStoreDatabase>) => Promise<T>) => work(db));
  const write = <T>(work: (on: Kysely<PetStoreDatabase>) => Promise<T>) => run(() => writeOutsideLog(work));
  /** Updates that need the lease and the run: nothing happens for an instance that lost it, a run a replay ended, or after a delete. */
  const held = (on: Kysely<PetStoreDatabase>, id: string, run: DeliveryRun) =>
    on.updateTable('webhooks').where('id', '=', id).where('lease_holder', '=', run.holder).where('replays', '=', run.replays);
  const changed = (result: { numUpdatedRows: bigint }) => result.numUpdatedRows > 0n;
  const logEnd = () => readLogEnd(db, dialect);
  /**
   * Adds attempts to a subscription's log and prunes it to the newest WEBHOOK_ATTEMPTS_KEPT and the last
   * WEBHOOK_ATTEMPTS_KEPT_MS: the delete walks one subscription's few rows by index, whatever the table holds.
   */
  const record = async (on: Kysely<PetStoreDatabase>, id: string, attempts: readonly NewWebhookAttempt[]) => {
    if (attempts.length === 0) return;
    const kept = attempts.slice(-WEBHOOK_ATTEMPTS_KEPT);
    await on.insertInto('webhook_attempts').values(kept.map((attempt) => attemptRow(id, attempt))).execute();
    const oldestKept = Date.parse(kept.at(-1)!.attemptedAt) - WEBHOOK_ATTEMPTS_KEPT_MS;
    await on
      .deleteFrom('webhook_attempts')
      .where('webhook_id', '=', id)
      .where((where) =>
        where.or([
          where('attempted_at', '<', new Date(oldestKept).toISOString()),
          where('id', '<', (select) =>
            select.selectFrom('webhook_attempts').select('id').where('webhook_id', '=', id).orderBy('id', 'desc').limit(1).offset(WEBHOOK_ATTEMPTS_KEPT - 1),
          ),
        ]),
      )
      .execute();
  };

  return {
    async create(input: NewWebhookSubscription, now: Date, maxPerOwner: number) {
      const secret = newWebhookSecret();
      // Starts at the end of the log: it hears of what commits from now on.
      const position = await logEnd();
      const row: WebhooksTable = {
        id: `wh_${randomBytes(12).toString('base64url')}`,
        owner_key_id: input.ownerKeyId,
        url: input.url,
        types: input.types === undefined ? null : JSON.stringify(input.types),
        pet_id: input.petId ?? null,
        secret,
        created_at: now.toISOString(),
        status: 'active',
        position,
        attempts: 0,
        last_error: null,
        next_try_at: null,
        failing_since: null,
        last_delivered_at: null,
        lease_holder: null,
        lease_expires_at: null,
        batch_size: input.batchSize ?? 1,
        batch_until: null,
        previous_secret: null,
        previous_secret_until: null,
        replays: 0,
        max_per_second: input.maxPerSecond ?? null,
      };
      const countThenInsert = async (on: Kysely<PetStoreDatabase>) => {
        const owned = await on.selectFrom('webhooks').select((select) => select.fn.countAll<number | string | bigint>().as('count')).where('owner_key_id', '=', input.ownerKeyId).executeTakeFirstOrThrow();
        if (Number(owned.count) >= maxPerOwner) throw new WebhookLimitReached(maxPerOwner);
        await on.insertInto('webhooks').values(row).execute();
      };
      // The count holds only while no other create of the same owner runs: SQLite's write lock says so;
      // on PostgreSQL a lock on the owner, held to the end of the transaction, makes their creates take turns.
      if (dialect.name === 'postgres') {
        await run(() => db.transaction().execute(async (transaction) => {
          await sql`select pg_advisory_xact_lock(hashtext(${`webhooks:${input.ownerKeyId}`}))`.execute(transaction);
          await countThenInsert(transaction);
        }));
      } else {
        await write(countThenInsert);
      }
      const subscription = await this.get(row.id);
      return { subscription: subscription!, secret };
    },

    async list(ownerKeyId?: string) {
      let query = db.selectFrom('webhooks').selectAll();
      if (ownerKeyId !== undefined) query = query.where('owner_key_id', '=', ownerKeyId);
      const rows = await run(() => query.orderBy('created_at').orderBy('id').execute());
      return rows.map(subscriptionFromRow);
    },

    async countByStatus() {
      const rows = await run(() => db.selectFrom('webhooks').select((select) => ['status', select.fn.countAll<number | string | bigint>().as('count')]).groupBy('status').execute());
      const counts = new Map<WebhookStatus, number>(WEBHOOK_STATUSES.map((status) => [status, 0]));
      for (const row of rows) if (counts.has(row.status as WebhookStatus)) counts.set(row.status as WebhookStatus, Number(row.count));
      return counts;
    },

    async get(id: string) {
      const row = await run(() => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst());
      return row && subscriptionFromRow(row);
    },

    async withSecret(id: string) {
      const row = await run(() => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst());
      if (!row) return undefined;
      const previous = row.previous_secret !== null && row.previous_secret_until !== null ? { secret: row.previous_secret, until: row.previous_secret_until } : undefined;
      return { subscription: subscriptionFromRow(row), secrets: { current: row.secret, ...(previous ? { previous } : {}) } };
    },

    async delete(id: string) {
      const result = await write(async (on) => {
        await on.deleteFrom('webhook_attempts').where('webhook_id', '=', id).execute();
        return on.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
      });
      return result.numDeletedRows > 0n;
    },

    async rotateSecret(id: string, now: Date, overlapMs: number) {
      const secret = newWebhookSecret();
      const result = await write((on) =>
        on
          .updateTable('webhooks')
          .set((set) => ({ previous_secret: set.ref('secret'), previous_secret_until: new Date(now.getTime() + overlapMs).toISOString(), secret }))
          .where('id', '=', id)
          .executeTakeFirst(),
      );
      return changed(result) ? secret : undefined;
    },

    async replay(id: string, after: number) {
      if (after > (await logEnd())) return 'past_log_end';
      const result = await write((on) =>
        on
          .updateTable('webhooks')
          .set((set) => ({
            status: 'active', position: after, attempts: 0, last_error: null, next_try_at: null, failing_since: null, batch_until: null,
            // The run delivering it writes nothing more; the lease holder sees the count change at its next look and starts over here.
            replays: sql<number>`${set.ref('replays')} + 1`,
          }))
          .where('id', '=', id)
          .executeTakeFirst(),
      );
      return changed(result) ? 'replaying' : 'no_subscription';
    },

    async attempts(id: string, page: { limit: number; before?: number }, now: Date) {
      let query = db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('webhook_id', '=', id)
        .where('attempted_at', '>=', new Date(now.getTime() - WEBHOOK_ATTEMPTS_KEPT_MS).toISOString());
      if (page.before !== undefined) query = query.where('id', '<', page.before);
      const rows = await run(() => query.orderBy('id', 'desc').limit(Math.min(page.limit, WEBHOOK_ATTEMPTS_KEPT)).execute());
      return rows.map((row) => ({
        id: Number(row.id),
        attemptedAt: row.attempted_at,
        messageId: row.message_id,
        positions: JSON.parse(row.positions) as number[],
        responseStatus: row.response_status,
        durationMs: row.duration_ms,
        error: row.error,
      }));
    },

    async resume(id: string) {
      const result = await write((on) =>
        on
          .updateTable('webhooks')
          .set({ status: 'active', attempts: 0, next_try_at: null, failing_since: null })
          .where('id', '=', id)
          .executeTakeFirst(),
      );
      return changed(result);
    },

    async lease(holder: string, now: Date, expiresAt: Date) {
      // Own leases with more than half their time left are not rewritten: a look soon after a renewal writes only what it takes.
      const renewBefore = new Date(now.getTime() + (expiresAt.getTime() - now.getTime()) / 2).toISOString();
      const rows = await write(async (on) => {
        await on
          .updateTable('webhooks')
          .set({ lease_holder: holder, lease_expires_at: expiresAt.toISOString() })
          .where('status', '=', 'active')
          .where((where) =>
            where.or([
              where('lease_holder', 'is', null),
              where.and([where('lease_holder', '=', holder), where('lease_expires_at', '<', renewBefore)]),
              where('lease_expires_at', '<', now.toISOString()),
            ]),
          )
          .execute();
        return on.selectFrom('webhooks').select(['id', 'replays']).where('lease_holder', '=', holder).where('status', '=', 'active').orderBy('id').execute();
      });
      return rows.map(heldLease);
    },

    async takeFree(holder: string, now: Date, expiresAt: Date) {
      const rows = await write(async (on) => {
        await on
          .updateTable('webhooks')
          .set({ lease_holder: holder, lease_expires_at: expiresAt.toISOString() })
          .where('status', '=', 'active')
          .where((where) => where.or([where('lease_holder', 'is', null), where('lease_expires_at', '<', now.toISOString())]))
          .execute();
        // What this write took carries its expiry.
        return on
          .selectFrom('webhooks')
          .select(['id', 'replays'])
          .where('lease_holder', '=', holder)
          .where('lease_expires_at', '=', expiresAt.toISOString())
          .where('status', '=', 'active')
          .execute();
      });
      return rows.map(heldLease);
    },

    async release(id: string, holder: string) {
      await write((on) => on.updateTable('webhooks').where('id', '=', id).where('lease_holder', '=', holder).set({ lease_holder: null, lease_expires_at: null }).execute());
    },

    async advance(id: string, run: DeliveryRun, position: number, now: Date, attempts: readonly NewWebhookAttempt[] = []) {
      const result = await write(async (on) => {
        await record(on, id, attempts);
        return held(on, id, run)
          .set({ position, attempts: 0, last_error: null, next_try_at: null, failing_since: null, last_delivered_at: now.toISOString(), batch_until: null })
          .executeTakeFirst();
      });
      return changed(result);
    },

    async fixBatch(id: string, run: DeliveryRun, until: number) {
      return changed(await write((on) => held(on, id, run).set({ batch_until: until }).executeTakeFirst()));
    },

    async failed(id: string, run: DeliveryRun, attempt: FailedAttempt, attempts: readonly NewWebhookAttempt[] = []) {
      const result = await write(async (on) => {
        await record(on, id, attempts);
        return held(on, id, run)
          .set({
            attempts: attempt.attempts,
            last_error: attempt.lastError,
            failing_since: attempt.failingSince,
            next_try_at: attempt.nextTryAt ?? null,
            ...(attempt.nextTryAt === undefined ? { status: 'failing', lease_holder: null, lease_expires_at: null } : {}),
          })
          .executeTakeFirst();
      });
      return changed(result);
    },

    async disable(id: string, run: DeliveryRun, lastError: string, attempts: readonly NewWebhookAttempt[] = []) {
      const result = await write(async (on) => {
        await record(on, id, attempts);
        return held(on, id, run).set(disabledRow(lastError)).executeTakeFirst();
      });
      return changed(result);
    },
  };
}


/** A subscription stopped until resumed, and why; its lease let go, so a delivery run's next write finds it gone. */
function disabledRow(lastError: string) {
  return { status: 'disabled', last_error: lastError, next_try_at: null, lease_holder: null, lease_expires_at: null } as const;
}

/** What a revoked key's subscriptions say in `lastError`. */
export const REVOKED_KEY_ERROR = 'the API key that owns this subscription was revoked';

/** Disables every subscription `ownerKeyId` owns: written in the transaction that revokes the key. */
export async function disableSubscriptionsOf(on: Kysely<PetStoreDatabase>, ownerKeyId: string): Promise<void> {
  await on.updateTable('webhooks').set(disabledRow(REVOKED_KEY_ERROR)).where('owner_key_id', '=', ownerKeyId).execute();
}

function subscriptionFromRow(row: Selectable<WebhooksTable>): WebhookSubscription {
  return {
    id: row.id,
    ownerKeyId: row.owner_key_id,
    url: row.url,
    ...(row.types === null ? {} : { types: JSON.parse(row.types) as PetEvent['type'][] }),
    ...(row.pet_id === null ? {} : { petId: Number(row.pet_id) }),
    createdAt: row.created_at,
    status: WEBHOOK_STATUSES.find((status) => status === row.status) ?? 'active',
    position: Number(row.position),
    attempts: row.attempts,
    lastError: row.last_error,
    nextTryAt: row.next_try_at,
    failingSince: row.failing_since,
    lastDeliveredAt: row.last_delivered_at,
    batchSize: row.batch_size,
    batchUntil: row.batch_until === null ? null : Number(row.batch_until),
    ...(row.max_per_second === null ? {} : { maxPerSecond: row.max_per_second }),
    replays: Number(row.replays),
  };
}

function heldLease(row: { id: string; replays: number }): HeldLease {
  return { id: row.id, replays: Number(row.replays) };
}

function attemptRow(webhookId: string, attempt: NewWebhookAttempt) {
  return {
    webhook_id: webhookId,
    attempted_at: attempt.attemptedAt,
    message_id: attempt.messageId,
    positions: JSON.stringify(attempt.positions),
    response_status: attempt.responseStatus,
    duration_ms: attempt.durationMs,
    error: attempt.error,
  };
}
