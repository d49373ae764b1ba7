import { addPetWithPosition } from './add-pet.ts';
import { changePetStatus } from './change-pet-status.ts';
import { getPet } from './get-pet.ts';
import { listPetPage } from './list-pets.ts';

/** The use cases the pet routes call, in one record so that an adapter (tracing) can wrap each of them. */
export const PET_USE_CASES = Object.freeze({ addPet: addPetWithPosition, changePetStatus, getPet, listPetPage });

export type PetUseCases = typeof PET_USE_CASES;
