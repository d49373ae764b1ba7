import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readError, startTestService } from '../support/test-service.ts';
import type { TestService } from '../support/test-service.ts';

interface Pet {
  id: number;
  status?: string;
}

const STATUSES = ['available', 'pending', 'sold', undefined] as const;

describe('listing past the first page: after and Link rel="next"', () => {
  let api: TestService;
  const created: Pet[] = [];

  before(async () => {
    api = await startTestService();
    for (let index = 0; index < 250; index++) {
      const status = STATUSES[index % STATUSES.length];
      const response = await api.createPet(status ? { name: `pet ${index}`, categoryId: 1, status } : { name: `pet ${index}`, categoryId: 1 });
      created.push((await response.json()) as Pet);
    }
  });
  after(() => api.stop());

  /** Follows rel="next" from `path` to the end; returns every pet seen and every next link. */
  async function walk(path: string): Promise<{ pets: Pet[]; links: string[] }> {
    const pets: Pet[] = [];
    const links: string[] = [];
    let url: string | undefined = api.origin + path;
    while (url) {
      const response: Response = await api.request(url.slice(api.origin.length));
      assert.equal(response.status, 200);
      pets.push(...((await response.json()) as Pet[]));
      const link = response.headers.get('link');
      url = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
      if (link) {
        assert.ok(url, `a well-formed next link: ${link}`);
        links.push(url!);
      }
    }
    return { pets, links };
  }

  it('walks every pet exactly once, in id order, with limit=7', async () => {
    const { pets, links } = await walk('/v1/pets?limit=7');
    assert.deepEqual(pets.map((pet) => pet.id), created.map((pet) => pet.id));
    assert.equal(links.length, Math.ceil(250 / 7) - 1, 'the last page carries no next link');
    assert.ok(links.every((link) => link.startsWith(`${api.baseUrl}/pets?limit=7&after=`)), 'absolute, on the public base, limit carried over');
  });

  for (const status of ['available', 'pending', 'sold'] as const) {
    it(`walks every ${status} pet exactly once with the filter carried over`, async () => {
      const { pets, links } = await walk(`/v1/pets?limit=7&status=${status}`);
      assert.deepEqual(pets.map((pet) => pet.id), created.filter((pet) => pet.status === status).map((pet) => pet.id));
      assert.ok(links.every((link) => link.includes(`status=${status}`) && link.includes('limit=7')));
    });
  }

  it('gives no next link when the page holds the last pet exactly', async () => {
    const last = created.at(-1)!.id;
    const response = await api.request(`/v1/pets?limit=1&after=${last - 1}`);
    assert.deepEqual(((await response.json()) as Pet[]).map((pet) => pet.id), [last]);
    assert.equal(response.headers.get('link'), null);
  });

  it('carries the default limit into the next link when none was given', async () => {
    const response = await api.request('/v1/pets');
    assert.match(response.headers.get('link') ?? '', /[?&]limit=20&after=\d+>; rel="next"$/);
  });

  it('answers after=0 from the first pet, and after the last pet with an empty array', async () => {
    assert.equal(((await (await api.request('/v1/pets?after=0&limit=1')).json()) as Pet[])[0]!.id, created[0]!.id);
    const past = await api.request(`/v1/pets?after=${created.at(-1)!.id}`);
    assert.deepEqual(await past.json(), []);
  });

  for (const value of ['', '-1', 'abc', '1.5', '01', '0x10', '9007199254740992']) {
    it(`refuses after=${JSON.stringify(value)} with 400 invalid_query naming the parameter`, async () => {
      const error = await readError(await api.request(`/v1/pets?after=${encodeURIComponent(value)}`));
      assert.equal(error.code, 'invalid_query');
      assert.match(error.message, /after/);
    });
  }

  it('refuses a repeated after with 400 invalid_query', async () => {
    const error = await readError(await api.request('/v1/pets?after=1&after=2'));
    assert.equal(error.code, 'invalid_query');
  });
});
