import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { PetEvent } from '../../domain/index.ts';
import { WebhookLimitReached } from '../../application/index.ts';
import type { FailedAttempt, NewWebhookSubscription, WebhookSubscription, WebhookSubscriptions } from '../../application/index.ts';
import { translated } from '../store/sql-dialect.ts';
import type { SqlDialect } from '../store/sql-dialect.ts';
import type { PetStoreDatabase, WebhooksTable } from '../store/schema.ts';
import type { SqlPetStore } from '../store/sql-pet-store.ts';

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Subscriptions in the `webhooks` table, the same queries on SQLite and PostgreSQL. */
export function createSqlWebhookSubscriptions(store: Pick<SqlPetStore, 'db' | 'dialect' | 'writeOutsideLog'>): WebhookSubscriptions {
  const { db, dialect } = store;
  const run = <T>(work: () => Promise<T>) => translated(dialect, work);
  // Delivery writes change no pet and no event: on SQLite they must not look like a commit that might have.
  const writeOutsideLog = store.writeOutsideLog ?? (<T>(work: (on: Kysely<PetStoreDatabase>) => Promise<T>) => work(db));
  const write = <T>(work: (on: Kysely<PetStoreDatabase>) => Promise<T>) => run(() => writeOutsideLog(work));
  /** Updates that need the lease: nothing happens for an instance that lost it (or after a delete). */
  const held = (on: Kysely<PetStoreDatabase>, id: string, holder: string) => on.updateTable('webhooks').where('id', '=', id).where('lease_holder', '=', holder);
  const changed = (result: { numUpdatedRows: bigint }) => result.numUpdatedRows > 0n;

  return {
    async create(input: NewWebhookSubscription, now: Date, maxPerOwner: number) {
      const secret = newWebhookSecret();
      // Starts at the end of the log: it hears of what commits from now on.
      const head = await run(() => db.selectFrom('events').select((select) => select.fn.max('position').as('last')).executeTakeFirst());
      const row: WebhooksTable = {
        id: `wh_${randomBytes(12).toString('base64url')}`,
        owner_key_id: input.ownerKeyId,
        url: input.url,
        types: input.types === undefined ? null : JSON.stringify(input.types),
        pet_id: input.petId ?? null,
        secret,
        created_at: now.toISOString(),
        status: 'active',
        position: Number(head?.last ?? 0),
        attempts: 0,
        last_error: null,
        next_try_at: null,
        failing_since: null,
        last_delivered_at: null,
        lease_holder: null,
        lease_expires_at: null,
        batch_size: input.batchSize ?? 1,
        batch_until: null,
      };
      await write(async (on) => {
        // Counted beside the insert (on SQLite under the write lock; on PostgreSQL concurrent creates of one key may pass it by their number).
        const owned = await on.selectFrom('webhooks').select((select) => select.fn.countAll<number | string | bigint>().as('count')).where('owner_key_id', '=', input.ownerKeyId).executeTakeFirstOrThrow();
        if (Number(owned.count) >= maxPerOwner) throw new WebhookLimitReached(maxPerOwner);
        await on.insertInto('webhooks').values(row).execute();
      });
      const subscription = await this.get(row.id);
      return { subscription: subscription!, secret };
    },

    async list(ownerKeyId?: string) {
      let query = db.selectFrom('webhooks').selectAll();
      if (ownerKeyId !== undefined) query = query.where('owner_key_id', '=', ownerKeyId);
      const rows = await run(() => query.orderBy('created_at').orderBy('id').execute());
      return rows.map(subscriptionFromRow);
    },

    async get(id: string) {
      const row = await run(() => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst());
      return row && subscriptionFromRow(row);
    },

    async withSecret(id: string) {
      const row = await run(() => db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst());
      return row && { subscription: subscriptionFromRow(row), secret: row.secret };
    },

    async delete(id: string) {
      const result = await write((on) => on.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst());
      return result.numDeletedRows > 0n;
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
        return on.selectFrom('webhooks').select('id').where('lease_holder', '=', holder).where('status', '=', 'active').orderBy('id').execute();
      });
      return rows.map((row) => row.id);
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
        return on.selectFrom('webhooks').select('id').where('lease_holder', '=', holder).where('lease_expires_at', '=', expiresAt.toISOString()).where('status', '=', 'active').execute();
      });
      return rows.map((row) => row.id);
    },

    async release(id: string, holder: string) {
      await write((on) => held(on, id, holder).set({ lease_holder: null, lease_expires_at: null }).execute());
    },

    async advance(id: string, holder: string, position: number, now: Date) {
      const result = await write((on) =>
        held(on, id, holder)
          .set({ position, attempts: 0, last_error: null, next_try_at: null, failing_since: null, last_delivered_at: now.toISOString(), batch_until: null })
          .executeTakeFirst(),
      );
      return changed(result);
    },

    async fixBatch(id: string, holder: string, until: number) {
      return changed(await write((on) => held(on, id, holder).set({ batch_until: until }).executeTakeFirst()));
    },

    async failed(id: string, holder: string, attempt: FailedAttempt) {
      const result = await write((on) =>
        held(on, id, holder)
          .set({
            attempts: attempt.attempts,
            last_error: attempt.lastError,
            failing_since: attempt.failingSince,
            next_try_at: attempt.nextTryAt ?? null,
            ...(attempt.nextTryAt === undefined ? { status: 'failing', lease_holder: null, lease_expires_at: null } : {}),
          })
          .executeTakeFirst(),
      );
      return changed(result);
    },
  };
}

function subscriptionFromRow(row: Selectable<WebhooksTable>): WebhookSubscription {
  return {
    id: row.id,
    ownerKeyId: row.owner_key_id,
    url: row.url,
    ...(row.types === null ? {} : { types: JSON.parse(row.types) as PetEvent['type'][] }),
    ...(row.pet_id === null ? {} : { petId: Number(row.pet_id) }),
    createdAt: row.created_at,
    status: row.status === 'failing' ? 'failing' : 'active',
    position: Number(row.position),
    attempts: row.attempts,
    lastError: row.last_error,
    nextTryAt: row.next_try_at,
    failingSince: row.failing_since,
    lastDeliveredAt: row.last_delivered_at,
    batchSize: row.batch_size,
    batchUntil: row.batch_until === null ? null : Number(row.batch_until),
  };
}
