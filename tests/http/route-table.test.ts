import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pathOf } from '../../adapters/http/pipeline/request-pipeline.ts';
import { startTestService, TEST_API_KEY } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';
import { declareRoutes, routeTable } from '../../adapters/http/pipeline/route-table.ts';
import type { AnswerBranch, Route } from '../../adapters/http/pipeline/request-state.ts';

const listing: AnswerBranch = () => undefined;
const creation: AnswerBranch = () => undefined;

function table() {
  const pets = declareRoutes({ keyed: true });
  pets.get('listPets', '/v1/pets', { branch: listing }, () => {});
  pets.post('createPet', '/v1/pets', { branch: creation }, () => {});
  pets.get('getPet', '/v1/pets/:petId', { marks: () => ({ Deprecation: '@1' }) }, () => {});
  pets.patch('changePetStatus', '/v1/pets/:petId', () => {});
  pets.get('listPetEvents', '/v1/pets/:petId/events', () => {});
  const documents = declareRoutes({ keyed: false });
  documents.get('openApiDocument', '/v1/openapi.json', () => {});
  return routeTable([...pets.routes, ...documents.routes]);
}

describe('the route table', () => {
  it('finds a route by method and exact path, with its key rule, marks and branch declared on it', () => {
    const routes = table();
    assert.equal(routes.match('GET', '/v1/pets')?.branch, listing);
    assert.equal(routes.match('POST', '/v1/pets')?.branch, creation);
    const getPet = routes.match('GET', '/v1/pets/12')!;
    assert.deepEqual([getPet.route.name, getPet.route.keyed, getPet.route.marks?.(), getPet.params], ['getPet', true, { Deprecation: '@1' }, { petId: '12' }]);
    assert.equal(routes.match('GET', '/v1/openapi.json')?.route.keyed, false);
  });

  it('answers a HEAD with the GET route, never with its branch', () => {
    const head = table().match('HEAD', '/v1/pets')!;
    assert.equal(head.route.name, 'listPets');
    assert.equal(head.branch, undefined);
  });

  it('matches paths exactly and case-sensitively: a trailing slash, an empty segment, another case are no route', () => {
    const routes = table();
    for (const path of ['/v1/pets/', '/V1/pets', '/v1/pets//events', '/v1/pets/1/events/', '/v1/pets/1/2', '/v1']) {
      assert.equal(routes.match('GET', path), undefined, path);
    }
  });

  it('decodes a parameter as the router did, and keeps one that does not decode as sent', () => {
    const routes = table();
    assert.deepEqual(routes.match('GET', '/v1/pets/%31%32')?.params, { petId: '12' });
    assert.deepEqual(routes.match('GET', '/v1/pets/%E0%A4%A')?.params, { petId: '%E0%A4%A' });
  });

  it('names the methods of a path in its order, a GET\'s HEAD first, and the template of its first route', () => {
    const routes = table();
    assert.deepEqual(routes.methodsAt('/v1/pets'), ['HEAD', 'GET', 'POST']);
    assert.deepEqual(routes.methodsAt('/v1/pets/7'), ['HEAD', 'GET', 'PATCH']);
    assert.deepEqual(routes.methodsAt('/v1/nothing'), []);
    assert.equal(routes.templateAt('/v1/pets/7'), '/v1/pets/:petId');
    assert.equal(routes.match('DELETE', '/v1/pets/7'), undefined, 'a known path, another method: no route (the app answers 405)');
  });

  it('refuses two routes for one method and template', () => {
    const route: Route = { name: 'a', method: 'GET', template: '/v1/a/:id', keyed: true, handlers: [] };
    assert.throws(() => routeTable([route, { ...route, name: 'b' }]), /two routes for GET \/v1\/a\/:id/);
  });
});

describe('the path a request is matched by', () => {
  it('is the target before its query or fragment, and an absolute-form target\'s path', () => {
    assert.equal(pathOf('/v1/pets?limit=1'), '/v1/pets');
    assert.equal(pathOf('/v1/pets#top'), '/v1/pets');
    assert.equal(pathOf('/v1/pets/1'), '/v1/pets/1');
    assert.equal(pathOf('http://pets.example/v1/pets?limit=1'), '/v1/pets');
    assert.equal(pathOf('*'), '*');
  });

  describe('over HTTP', () => {
    let api: TestService;
    before(async () => {
      api = await startTestService();
    });
    after(() => api.stop());

    it('answers an absolute-form target (RFC 9112 §3.2.2) as its path: the route, its key rule, its answer', async () => {
      const send = (authorization: string) => api.sendRaw(`GET http://127.0.0.1/v1/pets?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n${authorization}Connection: close\r\n\r\n`);
      const listed = await send(`Authorization: Bearer ${TEST_API_KEY}\r\n`);
      assert.equal(listed.status, 200);
      assert.deepEqual(await listed.json(), []);
      assert.equal((await send('')).status, 401);
    });
  });
});
