import Router from '@koa/router';
import type { Context } from 'koa';
import { addPet, getPet, listPets, PetNotFound } from '../../application/index.ts';
import type { PetStorePorts, RequestContext } from '../../application/index.ts';
import type { ApiKeyVerifier } from '../api-keys.ts';
import type { RateLimitPolicy } from '../config.ts';
import { markDeprecated } from './deprecation.ts';
import { parseListQuery } from './list-query.ts';
import { readNewPet, requireJsonBody } from './new-pet-body.ts';
import { parsePetId } from './pet-id.ts';
import { limitRate } from './rate-limit.ts';
import { requireApiKey } from './require-api-key.ts';

export interface PetRoutesOptions {
  readonly ports: PetStorePorts;
  readonly verifier: ApiKeyVerifier;
  /** The deployment's public base address including /v1, for absolute Location and Link headers. */
  readonly publicBaseUrl: () => string;
  /** A token bucket per API key, counted after the key check; none when undefined. */
  readonly rateLimit?: RateLimitPolicy | undefined;
}

/** The pet operations under /v1. Each checks the key first, then path, query and body, in that order. */
export function createPetRouter({ ports, verifier, publicBaseUrl, rateLimit }: PetRoutesOptions): Router {
  // strict + sensitive: /v1/pets/ and /V1/pets are not /v1/pets.
  const router = new Router({ strict: true, sensitive: true });
  const authenticated = [requireApiKey(verifier), ...(rateLimit ? [limitRate(rateLimit)] : [])];

  router.get('listPets', '/v1/pets', ...authenticated, async (ctx) => {
    const query = parseListQuery(ctx.querystring);
    ctx.body = await listPets(ports, query);
  });

  router.post('createPet', '/v1/pets', ...authenticated, requireJsonBody(['application/json']), async (ctx) => {
    const pet = await addPet(ports, readNewPet(ctx), requestContext(ctx));
    ctx.status = 201;
    ctx.set('Location', `${publicBaseUrl()}/pets/${pet.id}`);
    ctx.body = pet;
  });

  router.get('getPet', '/v1/pets/:petId', markDeprecated('/pets', publicBaseUrl), ...authenticated, async (ctx) => {
    const text = ctx.params.petId!;
    const id = parsePetId(text);
    if (id === undefined) throw new PetNotFound(text);
    ctx.body = await getPet(ports, id);
  });

  return router;
}

function requestContext(ctx: Context): RequestContext {
  return { requestId: ctx.state.requestId, apiKeyId: ctx.state.apiKeyId };
}
