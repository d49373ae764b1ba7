import type { Check } from '../model.ts';
import { lostUpdate } from './conditional.ts';
import { feedOrder } from './feed.ts';
import { groupCheckpoint, groupDoubleAck, groupMismatch, groupOrder, groupSkip } from './groups.ts';
import { groupAckedRedelivered, groupDoubleLease } from './group-leases.ts';
import { listInvalid } from './lists.ts';
import { inventoryFold, orderEnds, orderHolds } from './orders.ts';
import { readInvalid, staleRead } from './reads.ts';
import { realtimeOrder } from './realtime.ts';
import { invalidTransition } from './transitions.ts';
import { duplicateCreate, lostWrite, phantomWrite } from './writes.ts';

/** Every check the checker runs, each over the one model of the history. */
export const CHECKS: readonly Check[] = [
  lostWrite, phantomWrite, duplicateCreate, feedOrder, staleRead, readInvalid, lostUpdate, realtimeOrder, invalidTransition, listInvalid,
  groupSkip, groupDoubleAck, groupOrder, groupMismatch, groupCheckpoint, groupDoubleLease, groupAckedRedelivered,
  orderHolds, orderEnds, inventoryFold,
];
