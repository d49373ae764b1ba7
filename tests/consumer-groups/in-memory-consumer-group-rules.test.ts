import { describe } from 'node:test';
import { createInMemoryConsumerGroups, createInMemoryGroupState } from '../../adapters/store/memory/in-memory-consumer-groups.ts';
import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';
import { consumerGroupRules } from '../support/consumer-group-rules.ts';
import type { GroupStore } from '../support/consumer-group-rules.ts';

describe('consumer groups in memory, two handles on one state', () => {
  consumerGroupRules(async () => {
    const store = createInMemoryPetStore();
    const groups = createInMemoryGroupState();
    const instance = (): GroupStore => ({ ports: store, eventLog: store.eventLog, consumerGroups: (limits) => createInMemoryConsumerGroups(store.eventLog, groups, limits) });
    return { first: instance(), second: instance(), async close() {} };
  });
});
