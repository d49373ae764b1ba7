export * from './add-pet.ts';
export * from './list-pets.ts';
export * from './get-pet.ts';
export * from './errors.ts';
export * from './ports.ts';
export * from './pet-projection.ts';
export * from './event-schema.ts';
