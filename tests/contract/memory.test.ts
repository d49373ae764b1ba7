import { createInMemoryPetStore } from '../../adapters/store/memory/in-memory-pet-store.ts';
import { petStoreContract } from './pet-store-contract.ts';

petStoreContract('memory', async () => ({ ports: createInMemoryPetStore(), close: async () => {} }));
