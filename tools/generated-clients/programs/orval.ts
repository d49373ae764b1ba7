// orval's fetch client (generated/petstore.ts), generated with the service's base address.
import { changePetStatus, createPet, listEvents, listPets } from './generated/petstore.js';
import type { CloudEvent, Pet } from './generated/petstore.js';
import { apiKey, expect } from './environment.js';

const options = { headers: { authorization: `Bearer ${apiKey}` } };

const created = await createPet({ name: 'Generated', categoryId: 1, status: 'available' }, options);
expect(created.status === 201, `create answered ${created.status}`);
if (created.status !== 201) throw new Error('unreachable');
const pet: Pet = created.data;
const id: number = pet.id;

const listed = await listPets({ status: 'available', limit: 100 }, options);
expect(listed.status === 200 && listed.data.some((candidate) => candidate.id === id), 'the new pet is listed');

const changed = await changePetStatus(id, { status: 'sold' }, options);
expect(changed.status === 200 && changed.data.status === 'sold', 'the status changed');

// An error's status is a number, as the document's typed const says (untyped, orval made it the string '400').
const refused = await createPet({ name: '', categoryId: 1 }, options);
if (refused.status === 400) {
  const status: number | undefined = refused.data.status;
  expect(status === 400 && refused.data.code === 'invalid_body', `an empty name answered ${status}`);
} else {
  expect(false, `an empty name answered ${refused.status}`);
}

// GET /events answers JSON or, asked for it, text/event-stream under one 200: orval types its data as
// either, so a program narrows it (the service answers JSON unless the request asks for the stream).
const feed = await listEvents({ after: 0 }, options);
const page: CloudEvent[] = feed.status === 200 && Array.isArray(feed.data) ? feed.data : [];
expect(page.some((event) => event.subject === `pets/${id}`), 'the log holds the new pet');
