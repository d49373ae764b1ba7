import { orderFromRow } from '../../../application/index.ts';
import type { Order } from '../../../domain/index.ts';
import type { Inventory, InventoryCounts, OrderBook, OrderRowValues } from '../../../application/index.ts';
import type { InMemoryTable } from './in-memory-read-models.ts';

/** The store's orders over the in-memory `orders` table: the SQL order book's twin. */
export function createInMemoryOrderBook(orders: InMemoryTable): OrderBook {
  return {
    async list({ status, petId, limit, after = 0 }) {
      const page: Order[] = [];
      for (const row of orders.from(after)) {
        if (status !== undefined && row.status !== status) continue;
        if (petId !== undefined && row.pet_id !== petId) continue;
        page.push(orderFromRow(row as unknown as OrderRowValues));
        if (page.length === limit) break;
      }
      return page;
    },
    async get(id) {
      const row = orders.get(id);
      return row && { order: orderFromRow(row as unknown as OrderRowValues), version: row.version as number };
    },
  };
}

/** The pets by status, counted over the in-memory `pets` table. */
export function createInMemoryInventory(pets: InMemoryTable): Inventory {
  return {
    async count(): Promise<InventoryCounts> {
      const counts = { available: 0, pending: 0, sold: 0 };
      for (const row of pets.from(0)) if (typeof row.status === 'string' && row.status in counts) counts[row.status as keyof typeof counts] += 1;
      return counts;
    },
  };
}
