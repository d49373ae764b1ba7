import { registerAggregate } from './aggregate-registry.ts';
import { ORDER_AGGREGATE } from './orders/order-aggregate.ts';
import { PET_AGGREGATE } from './pets/pet-aggregate.ts';

/**
 * The one list of the product's aggregates: the store, the feed, the rebuild and the history checker
 * know these and nothing else. Adding an aggregate adds its module and a line here.
 */
export const AGGREGATES = Object.freeze([PET_AGGREGATE, ORDER_AGGREGATE]);

for (const aggregate of AGGREGATES) registerAggregate(aggregate);
