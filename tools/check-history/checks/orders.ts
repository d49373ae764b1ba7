import type { Check, Finding } from '../model.ts';
import { inventoryOp } from '../order-operations.ts';
import type { OrderEvent } from '../store-log.ts';

const LIVE = new Set(['placed', 'approved']);

/**
 * `order-double-hold`: a pet held by two live (placed or approved) orders at once; `order-unavailable-pet`:
 * an order placed for a pet that was not available just before (sold, pending or without a status).
 */
export const orderHolds: Check = (model) => {
  const findings: Finding[] = [];
  const holder = new Map<number, OrderEvent>();
  const status = new Map<number, string>();
  const logIndex = model.logOp.completion!.index;
  for (const event of model.store.events) {
    status.set(event.orderId, event.status);
    if (event.status === 'placed') {
      const before = model.log.petAt(event.petId, event.position - 1).status;
      if (before !== 'available') {
        findings.push({ anomaly: 'order-unavailable-pet', ops: [logIndex], positions: [event.position], why: `order ${event.orderId} was placed for pet ${event.petId} while it was ${before ?? 'without a status'}` });
      }
      const held = holder.get(event.petId);
      if (held && LIVE.has(status.get(held.orderId)!)) {
        findings.push({
          anomaly: 'order-double-hold', ops: [logIndex], positions: [held.position, event.position],
          why: `pet ${event.petId} is held by order ${held.orderId} and by order ${event.orderId}, both live`,
        });
      }
      holder.set(event.petId, event);
    }
  }
  return findings;
};

/**
 * What an order's end does to its pet, in the commit that ends it (the pet's next event): `order-delivered-unsold`
 * (a delivered order whose pet does not become sold), `order-cancelled-reserved` (a cancelled order whose pet
 * stays reserved: it does not become available).
 */
export const orderEnds: Check = (model) => {
  const findings: Finding[] = [];
  const logIndex = model.logOp.completion!.index;
  for (const event of model.store.events) {
    if (event.status !== 'delivered' && event.status !== 'cancelled') continue;
    const wanted = event.status === 'delivered' ? 'sold' : 'available';
    const next = (model.log.pets.get(event.petId) ?? []).find((petEvent) => petEvent.position > event.position);
    if (next?.kind === 'status-changed' && next.status === wanted) continue;
    findings.push({
      anomaly: event.status === 'delivered' ? 'order-delivered-unsold' : 'order-cancelled-reserved', ops: [logIndex], positions: [event.position],
      why: `order ${event.orderId} was ${event.status}, and its pet ${event.petId} ${next ? `became ${next.status ?? 'without a status'} next` : 'never changed after'}, not ${wanted}`,
    });
  }
  return findings;
};

/**
 * `inventory-not-fold`: an inventory read that no state of the log from its `minPosition` on had: the pets
 * counted by status after some position at or past it, up to the log's end.
 */
export const inventoryFold: Check = (model) => {
  const reads = model.of('inventory').map(inventoryOp).filter((read) => read.ok);
  if (reads.length === 0) return [];
  // The counts after each pet event, in position order.
  const counts = { available: 0, pending: 0, sold: 0 } as Record<string, number>;
  const statusOf = new Map<number, string | null>();
  const after: { position: number; key: string }[] = [{ position: 0, key: '0/0/0' }];
  const key = () => `${counts.available}/${counts.pending}/${counts.sold}`;
  for (const event of [...model.log.events].sort((a, b) => a.position - b.position)) {
    const before = statusOf.get(event.petId);
    if (before != null && before in counts) counts[before]! -= 1;
    if (event.status !== null && event.status in counts) counts[event.status]! += 1;
    statusOf.set(event.petId, event.status);
    after.push({ position: event.position, key: key() });
  }
  const findings: Finding[] = [];
  for (const read of reads) {
    const { available, pending, sold } = read.ok!;
    const answered = `${available}/${pending}/${sold}`;
    // The state at `minPosition` is that after the last pet event at or before it; any later one is as good.
    let from = 0;
    while (from + 1 < after.length && after[from + 1]!.position <= read.minPosition) from++;
    if (after.slice(from).some((state) => state.key === answered)) continue;
    findings.push({
      anomaly: 'inventory-not-fold', ops: [read.index, model.logOp.completion!.index],
      why: `an inventory read at least as new as position ${read.minPosition} answered ${answered} (available/pending/sold), which no state of the log from there on had`,
    });
  }
  return findings;
};
