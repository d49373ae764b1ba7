import type { Kysely } from 'kysely';
import { orderFromRow } from '../../../application/index.ts';
import type { Inventory, InventoryCounts, OrderBook, OrderQuery, VersionedOrder } from '../../../application/index.ts';
import { translated } from '../sql-dialect.ts';
import type { SqlDialect } from '../sql-dialect.ts';
import type { PetStoreDatabase } from '../schema.ts';

const ORDER_FIELD_COLUMNS = ['id', 'pet_id', 'status', 'ship_date'] as const;

/** The store's orders over SQL: the `orders` read model, in id order. */
export function createSqlOrderBook(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): OrderBook {
  return {
    async list({ status, petId, limit, after }: OrderQuery) {
      let query = db.selectFrom('orders').select(ORDER_FIELD_COLUMNS);
      if (status !== undefined) query = query.where('status', '=', status);
      if (petId !== undefined) query = query.where('pet_id', '=', petId);
      if (after !== undefined) query = query.where('id', '>', after);
      const rows = await translated(dialect, () => query.orderBy('id').limit(limit).execute());
      return rows.map((row) => orderFromRow({ ...row, id: Number(row.id), pet_id: Number(row.pet_id) }));
    },
    async get(id: number): Promise<VersionedOrder | undefined> {
      const row = await translated(dialect, () => db.selectFrom('orders').select([...ORDER_FIELD_COLUMNS, 'version']).where('id', '=', id).executeTakeFirst());
      return row && { order: orderFromRow({ ...row, id: Number(row.id), pet_id: Number(row.pet_id) }), version: row.version };
    },
  };
}

/** The pets by status, counted in the read model `pets` (a pet without a status is in no count). */
export function createSqlInventory(db: Kysely<PetStoreDatabase>, dialect: SqlDialect): Inventory {
  return {
    async count(): Promise<InventoryCounts> {
      const rows = await translated(dialect, () => db.selectFrom('pets')
        .select((eb) => ['status', eb.fn.countAll<number | string>().as('n')])
        .where('status', 'is not', null).groupBy('status').execute());
      const counts = { available: 0, pending: 0, sold: 0 };
      for (const { status, n } of rows) if (status !== null && status in counts) counts[status as keyof typeof counts] = Number(n);
      return counts;
    },
  };
}
