// openapi-typescript's types (generated/schema.d.ts) with openapi-fetch.
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/schema.js';
import { apiKey, baseUrl, expect } from './environment.js';

type Pet = components['schemas']['Pet'];

const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });

const created = await client.POST('/pets', { body: { name: 'Generated', categoryId: 1, status: 'available' } });
expect(created.response.status === 201 && created.data !== undefined, `create answered ${created.response.status}`);
const pet: Pet = created.data!;
const id: number = pet.id;

// As docs/client.md generates it (--default-non-nullable false): a field with a default, such as a
// subscription's batchSize, stays optional in a request body. Type-checked only: no target is reachable here.
export const subscribe = () => client.POST('/webhooks', { body: { url: 'https://hooks.example.com/pets' } });

const listed = await client.GET('/pets', { params: { query: { status: 'available', limit: 100 } } });
expect(listed.data?.some((candidate) => candidate.id === id) === true, 'the new pet is listed');

const changed = await client.PATCH('/pets/{petId}', { params: { path: { petId: id } }, body: { status: 'sold' } });
expect(changed.data?.status === 'sold', 'the status changed');

// An error's status is a number, as the document's typed const says.
const refused = await client.POST('/pets', { body: { name: '', categoryId: 1 } });
const status: number | undefined = refused.error?.status;
expect(status === 400 && refused.error?.code === 'invalid_body', `an empty name answered ${status}`);

// GET /events answers JSON or, asked for it, text/event-stream under one 200: a client typed for JSON
// alone (openapi-fetch's second type parameter) types the page as CloudEvent[] rather than `CloudEvent[] | string`.
type CloudEvent = components['schemas']['CloudEvent'];
const jsonClient = createClient<paths, 'application/json'>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });
const feed = await jsonClient.GET('/events', { params: { query: { after: 0 } } });
const page: CloudEvent[] | undefined = feed.data;
expect(page?.some((event) => event.subject === `pets/${id}`) === true, 'the log holds the new pet');
