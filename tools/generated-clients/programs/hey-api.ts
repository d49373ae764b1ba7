// @hey-api/openapi-ts's SDK and its fetch client (all generated into generated/).
import { changePetStatus, createPet, listPets } from './generated/index.js';
import type { Pet } from './generated/index.js';
import { client } from './generated/client.gen.js';
import { apiKey, baseUrl, expect } from './environment.js';

client.setConfig({ baseUrl, auth: () => apiKey });

const created = await createPet({ body: { name: 'Generated', categoryId: 1, status: 'available' } });
expect(created.response?.status === 201 && created.data !== undefined, `create answered ${created.response?.status}`);
const pet: Pet = created.data!;
const id: number = pet.id;

const listed = await listPets({ query: { status: 'available', limit: 100 } });
expect(listed.data?.some((candidate) => candidate.id === id) === true, 'the new pet is listed');

const changed = await changePetStatus({ path: { petId: id }, body: { status: 'sold' } });
expect(changed.data?.status === 'sold', 'the status changed');

// An error's status is a number, as the document's typed const says.
const refused = await createPet({ body: { name: '', categoryId: 1 } });
const status: number | undefined = refused.error?.status;
expect(status === 400 && refused.error?.code === 'invalid_body', `an empty name answered ${status}`);
