import type { Operation } from './history.ts';
import { isInteger, maybe, need, okValue, viewed } from './operations.ts';
import type { Viewed } from './operations.ts';

/**
 * The store's operations in a history: `order` (place an order for `petId`), `move-order` (an order to
 * `status`: approved, delivered or cancelled), `inventory` (the pets by status, read at least as new as
 * `minPosition`).
 */

export interface OrderOp extends Viewed {
  readonly petId: number;
  readonly ok?: { readonly id: number; readonly position: number };
}

export function orderOp(op: Operation): OrderOp {
  const ok = okValue(op);
  return { ...viewed(op), petId: need(op.invoke, 'petId', isInteger), ...(ok ? { ok: { id: need(ok, 'id', isInteger), position: need(ok, 'position', isInteger) } } : {}) };
}

export interface InventoryOp extends Viewed {
  readonly minPosition: number;
  readonly ok?: { readonly available: number; readonly pending: number; readonly sold: number };
}

export function inventoryOp(op: Operation): InventoryOp {
  const ok = okValue(op);
  return {
    ...viewed(op),
    minPosition: maybe(op.invoke, 'minPosition', isInteger) ?? 0,
    ...(ok ? { ok: { available: need(ok, 'available', isInteger), pending: need(ok, 'pending', isInteger), sold: need(ok, 'sold', isInteger) } } : {}),
  };
}

export function moveOrderOp(op: Operation): Viewed & { readonly id: number } {
  return { ...viewed(op), id: need(op.invoke, 'id', isInteger) };
}

/** The store's views, beside the pets' (`OPERATION_VIEWS`). */
export const ORDER_VIEWS: Readonly<Record<string, (op: Operation) => unknown>> = Object.freeze({ order: orderOp, 'move-order': moveOrderOp, inventory: inventoryOp });
