import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { PET_STATUSES } from '../../domain/index.ts';
import { ERROR_STATUS } from '../../adapters/http/pipeline/errors.ts';
import { buildOpenApiDocument, openApiServers } from '../../contract/openapi-document.ts';
import { ErrorSchema, NewPetSchema, PetSchema, PetStatusSchema } from '../../contract/schemas.ts';
import { checkNewPet } from '../../domain/index.ts';
import { documentSchemas, responseContract } from '../support/response-contract.ts';
import { startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

type Json = Record<string, any>;

let api: TestService;
let document: Json;

before(async () => {
  api = await startTestService({ PETSTORE_PRODUCTION_URL: 'https://api.example.com/v1', PETSTORE_STAGING_URL: 'https://staging.example.com/v1' });
  const response = await fetch(`${api.origin}/v1/openapi.json`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  document = (await response.json()) as Json;
});

after(async () => {
  await api.stop();
});

async function validate(candidate: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  return new Validator().validate(candidate as Json);
}

describe('GET /v1/openapi.json', () => {
  it('is served without a key and passes an independent OpenAPI 3.1 validator', async () => {
    assert.equal(document.openapi, '3.1.0');
    const result = await validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
  });

  it('fails that validator once broken, so the check above can fail', async () => {
    const broken = structuredClone(document);
    broken.paths['/pets'].get.responses = 'none';
    assert.equal((await validate(broken)).valid, false);
  });

  it('names the operations listPets, createPet, getPet (deprecated), and changePetStatus, listEvents, listPetEvents, the webhook, consumer group and store operations (x-stability: experimental)', () => {
    const operations = Object.values(document.paths as Json).flatMap((item: Json) =>
      Object.values(item).filter((value): value is Json => typeof value?.operationId === 'string'));
    const webhookOperations = [
      'createWebhook', 'deleteWebhook', 'getWebhook', 'getWebhookDeliveries', 'listWebhookAttempts', 'listWebhooks', 'replayWebhook', 'resumeWebhook', 'rotateWebhookSecret',
      'putConsumerGroup', 'getConsumerGroup', 'deleteConsumerGroup', 'listConsumerGroups', 'claimConsumerGroupEvents', 'ackConsumerGroupEvents',
      'nackConsumerGroupEvents', 'extendConsumerGroupLeases', 'listParkedEvents', 'replayParkedEvents',
      'placeOrder', 'listOrders', 'getOrder', 'updateOrder', 'cancelOrder', 'getInventory',
    ];
    assert.deepEqual(operations.map((operation) => operation.operationId).sort(), ['changePetStatus', 'createPet', 'getPet', 'listEvents', 'listPetEvents', 'listPets', ...webhookOperations].sort());
    for (const operation of operations.filter((candidate) => webhookOperations.includes(candidate.operationId))) assert.equal(operation['x-stability'], 'experimental');
    // The callback a subscribed URL receives, under the 3.1 document's `webhooks`.
    assert.equal(document.webhooks.petEvent.post['x-stability'], 'experimental');
    assert.deepEqual(Object.keys(document.webhooks.petEvent.post.requestBody.content), ['application/cloudevents+json', 'application/cloudevents-batch+json']);
    assert.equal(document.tags.find((tag: Json) => tag.name === 'Store')['x-stability'], 'experimental');
    assert.equal(document.paths['/pets/{petId}'].get.deprecated, true);
    assert.equal(document.paths['/pets/{petId}'].patch['x-stability'], 'experimental');
    assert.equal(document.paths['/events'].get['x-stability'], 'experimental');
    assert.equal(document.paths['/pets/{petId}/events'].get['x-stability'], 'experimental');
    assert.deepEqual(Object.keys(document.paths['/events'].get.responses[200].content), ['application/json', 'text/event-stream']);
    for (const operation of operations.filter((candidate) => candidate.operationId !== 'getPet')) assert.notEqual(operation.deprecated, true);
  });

  it('gives every const and every enum its type, as code generators need (a const 400 with no type becomes the string "400")', () => {
    const untyped: string[] = [];
    const visit = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((item, index) => visit(item, `${at}/${index}`));
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Json;
      const values = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : [];
      for (const value of values) {
        const wanted = Number.isInteger(value) ? ['integer', 'number'] : [typeof value];
        if (!wanted.includes(schema.type)) untyped.push(`${at}: ${JSON.stringify(value)} with type ${JSON.stringify(schema.type)}`);
      }
      for (const [key, value] of Object.entries(schema)) if (key !== 'enum' && key !== 'const' && key !== 'examples' && key !== 'example') visit(value, `${at}/${key}`);
    };
    visit(document, '#');
    assert.deepEqual(untyped, []);
    assert.equal(document.paths['/pets'].post.responses['400'].content['application/json'].schema.allOf[1].properties.status.type, 'integer');
  });

  it('names a contact, as linters ask of info', () => {
    assert.equal(typeof document.info.contact?.name, 'string');
  });

  it('lists production and staging from the configuration, each with /v1', () => {
    assert.deepEqual(document.servers.filter((server: Json) => server.description !== 'this server (development)').map((server: Json) => server.url), [
      'https://api.example.com/v1',
      'https://staging.example.com/v1',
    ]);
  });

  it('requires a bearer key on every operation', () => {
    assert.deepEqual(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', description: document.components.securitySchemes.bearerAuth.description });
    assert.deepEqual(document.security, [{ bearerAuth: [] }]);
  });

  it('has the components Pet, NewPet, Pets, PetStatus and Error, with the required fields, types, bounds and formats of the interface', () => {
    const { schemas } = document.components;
    for (const name of ['Pet', 'NewPet', 'Pets', 'PetStatus', 'Error']) assert.ok(schemas[name], name);
    const status = { $ref: '#/components/schemas/PetStatus' };
    assert.deepEqual(withoutDescriptions(schemas.NewPet), {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'categoryId'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001F]*[^\\s\\u0000-\\u001F][^\\u0000-\\u001F]*$' },
        categoryId: { type: 'integer', format: 'int64', minimum: 1, maximum: 9007199254740991 },
        status,
      },
    });
    assert.match(schemas.NewPet.properties.name.description, /code points/);
    assert.deepEqual(withoutDescriptions(schemas.Pet), {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'name', 'categoryId'],
      properties: {
        id: { type: 'integer', format: 'int64', minimum: 1 },
        name: { type: 'string' },
        categoryId: { type: 'integer', format: 'int64', minimum: 1, maximum: 9007199254740991 },
        status,
      },
    });
    assert.deepEqual(schemas.Pets, { type: 'array', items: { $ref: '#/components/schemas/Pet' } });
    assert.deepEqual(withoutDescriptions(schemas.PetStatus), { type: 'string', enum: ['available', 'pending', 'sold'] });
    assert.deepEqual(withoutDescriptions(schemas.Error), {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message', 'status'],
      properties: { code: { type: 'string', enum: Object.keys(ERROR_STATUS) }, message: { type: 'string' }, status: { type: 'integer' } },
    });
  });

  it('gives NewPet and Pet schemas that accept and refuse what the service\'s own checks do', () => {
    const validators = documentSchemas(document);
    const agree = (component: string, check: { Check(value: unknown): boolean }, samples: readonly unknown[]) => {
      const validate = validators.validatorAt(`/components/schemas/${component}`);
      for (const sample of samples) assert.equal(validate(sample), check.Check(sample), `${component} ${JSON.stringify(sample)}`);
    };
    const newPets = [
      { name: 'Rex', categoryId: 1 },
      { name: 'Rex', categoryId: 9007199254740991, status: 'sold' },
      {}, { name: 'Rex' }, { categoryId: 1 }, { name: '', categoryId: 1 }, { name: 5, categoryId: 1 },
      { name: 'Rex', categoryId: 0 }, { name: 'Rex', categoryId: 1.5 }, { name: 'Rex', categoryId: '1' }, { name: 'Rex', categoryId: 2 ** 53 },
      { name: 'Rex', categoryId: 1, status: 'lost' }, { name: 'Rex', categoryId: 1, status: null }, { id: 1, name: 'Rex', categoryId: 1 }, [], null,
    ];
    // What POST /v1/pets accepts: an object of known fields with the required ones (the body reader), whose values pass the domain's rules.
    const newPetCheck = {
      Check(value: unknown): boolean {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
        const fields = Object.keys(value);
        if (fields.some((field) => !Object.hasOwn(NewPetSchema.properties, field))) return false;
        if (NewPetSchema.required.some((field) => !fields.includes(field))) return false;
        try {
          checkNewPet(value as { name: unknown; categoryId: unknown });
          return true;
        } catch {
          return false;
        }
      },
    };
    agree('NewPet', newPetCheck, newPets);
    assert.deepEqual(newPets.map((sample) => newPetCheck.Check(sample)), [true, true, ...Array(newPets.length - 2).fill(false)]);
    // The name's bounds: code points, not UTF-16 units; white space around letters but not alone; no control character.
    const names: Array<[name: string, accepted: boolean]> = [
      ['😀'.repeat(255), true], ['a'.repeat(255), true], [' Rex ', true], ['Rex\u007f', true], ['x', true],
      ['😀'.repeat(256), false], ['a'.repeat(256), false], [' ', false], [' \u00a0\u2003', false], ['Re\u0007x', false], ['Rex\n', false], ['\tRex', false], ['\u0000', false],
    ];
    agree('NewPet', newPetCheck, names.map(([name]) => ({ name, categoryId: 1 })));
    assert.deepEqual(names.map(([name]) => newPetCheck.Check({ name, categoryId: 1 })), names.map(([, accepted]) => accepted));
    const pets = [
      { id: 1, name: '', categoryId: 1 },
      { id: 7, name: 'Rex', categoryId: 2, status: 'pending' },
      { name: 'Rex', categoryId: 1 }, { id: 0, name: 'Rex', categoryId: 1 }, { id: 1.5, name: 'Rex', categoryId: 1 }, { id: 1, categoryId: 1 },
      { id: 1, name: 'Rex', categoryId: 1, status: 'lost' }, { id: 1, name: 'Rex', categoryId: 1, colour: 'brown' },
    ];
    const petCheck = TypeCompiler.Compile(PetSchema);
    agree('Pet', petCheck, pets);
    assert.deepEqual(pets.map((sample) => petCheck.Check(sample)), [true, true, ...Array(pets.length - 2).fill(false)]);
  });

  it('bounds petId, in the path and in the events query, from 1 to 2^53-1, and the service refuses a sign with 400', async () => {
    const bounds = { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
    assert.deepEqual(withoutDescriptions(document.components.parameters.PetId.schema), bounds);
    assert.deepEqual(document.components.parameters.EventPetId.schema, bounds);
    assert.equal((await api.request('/v1/pets/-1')).status, 400);
    assert.equal((await api.request(`/v1/events?petId=${2 ** 53}`)).status, 400);
  });

  it('describes a new webhook\'s url as a URI of at most 2048 characters, which the service refuses otherwise with 400 naming url', async () => {
    assert.deepEqual(withoutDescriptions(document.components.schemas.NewWebhook.properties.url), { type: 'string', format: 'uri', minLength: 1, maxLength: 2048 });
    const validate = documentSchemas(document).validatorAt('/components/schemas/NewWebhook');
    for (const url of ['0', `https://example.com/${'a'.repeat(2048)}`]) {
      assert.equal(validate({ url }), false, url);
      const response = await api.request('/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) });
      assert.equal(response.status, 400, url.slice(0, 30));
      const { message } = (await response.json()) as { message: string };
      assert.match(message, /^url\b/);
    }
  });

  it('shows PetStatus and Error.code as string enums that the compiled checks agree with', () => {
    const { schemas } = document.components;
    assert.deepEqual(schemas.PetStatus.enum, [...PET_STATUSES]);
    assert.equal(schemas.PetStatus.type, 'string');
    assert.deepEqual(schemas.Error.properties.code.enum, Object.keys(ERROR_STATUS));
    const statusCheck = TypeCompiler.Compile(PetStatusSchema);
    for (const status of schemas.PetStatus.enum) assert.ok(statusCheck.Check(status), status);
    assert.equal(statusCheck.Check('lost'), false);
    const errorCheck = TypeCompiler.Compile(ErrorSchema);
    for (const code of schemas.Error.properties.code.enum) assert.ok(errorCheck.Check({ code, message: 'm', status: 400 }), code);
    assert.equal(errorCheck.Check({ code: 'teapot', message: 'm', status: 418 }), false);
  });

  it('names, for each error status of an operation, exactly the codes that come with that status', () => {
    for (const item of Object.values(document.paths as Json)) {
      for (const operation of Object.values(item as Json).filter((value: Json) => value?.responses)) {
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          if (Number(status) < 400) continue;
          const [reference, narrowing] = response.content['application/json'].schema.allOf;
          assert.equal(reference.$ref, '#/components/schemas/Error');
          for (const code of narrowing.properties.code.enum) assert.equal(ERROR_STATUS[code as keyof typeof ERROR_STATUS], Number(status), `${operation.operationId} ${status} ${code}`);
        }
      }
    }
  });

  it('documents the listing: limit, status, after, and the Link rel="next" header', () => {
    const listPets = document.paths['/pets'].get;
    const parameters = listPets.parameters.map((parameter: Json) => resolve(parameter));
    assert.deepEqual(parameters.filter((parameter: Json) => parameter.in === 'query').map((parameter: Json) => parameter.name), ['limit', 'status', 'after']);
    const limit = parameters.find((parameter: Json) => parameter.name === 'limit');
    assert.deepEqual([limit.schema.minimum, limit.schema.maximum, limit.schema.default], [1, 100, 20]);
    assert.match(resolve(listPets.responses['200'].headers.Link).description, /rel="next"/);
    assert.equal(listPets.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/Pets');
  });

  it('documents If-Match and ETag on changePetStatus, Idempotency-Key (experimental) and Location on createPet', () => {
    const patch = document.paths['/pets/{petId}'].patch;
    assert.ok(patch.parameters.map(resolve).some((parameter: Json) => parameter.name === 'If-Match' && parameter.in === 'header'));
    assert.ok(patch.responses['200'].headers.ETag);
    assert.ok(patch.responses['412']);
    assert.deepEqual(Object.keys(patch.requestBody.content), ['application/json', 'application/merge-patch+json']);
    const create = document.paths['/pets'].post;
    const idempotencyKey = create.parameters.map(resolve).find((parameter: Json) => parameter.name === 'Idempotency-Key');
    assert.equal(idempotencyKey['x-stability'], 'experimental');
    assert.equal(resolve(create.responses['201'].headers.Location).required, true);
    assert.ok(create.responses['422']);
  });

  it('documents the Deprecation, Sunset and Link headers on every answer of getPet from the service', () => {
    const getPet = document.paths['/pets/{petId}'].get;
    for (const status of ['200', '400', '401', '404', '500', '503']) {
      const headers = getPet.responses[status].headers;
      for (const name of ['Deprecation', 'Sunset', 'Link']) assert.equal(resolve(headers[name]).required, true, `${status} ${name}`);
    }
  });

  it('is what `buildOpenApiDocument` makes for this configuration', () => {
    assert.deepEqual(document, buildOpenApiDocument(document.servers));
  });
});

describe('servers when an address is not configured', () => {
  it('shows only this server in development with neither address', () => {
    assert.deepEqual(openApiServers({ productionUrl: undefined, stagingUrl: undefined }, 'http://127.0.0.1:3000/v1'), [
      { url: 'http://127.0.0.1:3000/v1', description: 'this server (development)' },
    ]);
  });

  it('leaves out a deployment without an address and does not repeat the current one', () => {
    assert.deepEqual(openApiServers({ productionUrl: 'https://api.example.com/v1', stagingUrl: undefined }, 'https://api.example.com/v1'), [
      { url: 'https://api.example.com/v1', description: 'production' },
    ]);
  });
});

describe('the response contract every HTTP test goes through', () => {
  const json = (body: unknown, headers: Record<string, string> = {}) =>
    ({ headers: new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r', ...headers }), body: JSON.stringify(body) });

  it('accepts an answer the document describes', () => {
    responseContract(document).check('GET', '/v1/pets?limit=1', { status: 200, ...json([{ id: 1, name: 'Rex', categoryId: 1, status: 'sold' }]) });
  });

  it('refuses a status the document does not list for the operation', () => {
    assert.throws(() => responseContract(document).check('GET', '/v1/pets', { status: 409, ...json({ code: 'illegal_transition', message: 'm', status: 409 }) }), /lists only/);
  });

  it('refuses a body that breaks the schema (an unknown status value)', () => {
    assert.throws(() => responseContract(document).check('GET', '/v1/pets', { status: 200, ...json([{ id: 1, name: 'Rex', categoryId: 1, status: 'lost' }]) }), /does not match/);
  });

  it('refuses an error code that does not belong to the status', () => {
    assert.throws(() => responseContract(document).check('GET', '/v1/pets', { status: 400, ...json({ code: 'not_found', message: 'm', status: 400 }) }), /does not match/);
  });

  it('refuses an answer without a header the document requires', () => {
    assert.throws(() => responseContract(document).check('POST', '/v1/pets', { status: 201, ...json({ id: 1, name: 'Rex', categoryId: 1 }) }), /Location/);
  });

  it('requires an Error body for errors on paths and methods that are no operation', () => {
    responseContract(document).check('DELETE', '/v1/pets', { status: 405, ...json({ code: 'method_not_allowed', message: 'm', status: 405 }) });
    assert.throws(() => responseContract(document).check('GET', '/v1/nothing', { status: 404, ...json({ error: 'not found' }) }), /does not match/);
  });
});

/** A schema without its `description`s: the prose is not what a test pins down. */
function withoutDescriptions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDescriptions);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'description').map(([key, value]) => [key, withoutDescriptions(value)]));
}

function resolve(value: Json): Json {
  if (typeof value?.$ref !== 'string') return value;
  return (value.$ref as string).slice(2).split('/').reduce((node: Json, key: string) => node[key], document);
}
