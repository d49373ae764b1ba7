import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';
import { orderStoreContract } from './order-store-contract.ts';
import { petStoreContract } from './pet-store-contract.ts';

const open = async () => ({ ports: createInMemoryPetStore(), close: async () => {} });

petStoreContract('memory', open);
orderStoreContract('memory', open);
