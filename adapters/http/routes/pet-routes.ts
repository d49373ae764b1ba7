import type { IncomingMessage } from 'node:http';
import { PET_USE_CASES, PetNotFound } from '../../../application/index.ts';
import type { NewPet, PetStorePorts, PetUseCases, RequestContext } from '../../../application/index.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import type { ListingAnswer, ListingCache } from '../listing-cache/listing-cache.ts';
import { createCachedListingBranch } from '../listing-cache/cached-listing.ts';
import { etagFor, parseIdempotencyKey, parseIfMatch } from '../parsing/conditional-headers.ts';
import { deprecated } from '../guards/deprecation.ts';
import { jsonBodyOf, readJsonBody, requireJsonBody } from '../parsing/json-body.ts';
import { nextPageLink, parseListQuery } from '../parsing/list-query.ts';
import { bodyShape, readBody } from '../parsing/checked-body.ts';
import { NewPetSchema, StatusPatchSchema } from '../../../contract/schemas.ts';
import { parsePetId } from '../parsing/pet-id.ts';
import { keyIdOf, stateOf } from '../pipeline/request-state.ts';
import type { RequestState, Route, RouteContext } from '../pipeline/request-state.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import type { Guard } from '../guards/guards.ts';
import type { ProblemOf } from '../pipeline/errors.ts';
import { createCreationBranch, creationHandler } from './creation-branch.ts';
import type { CreatedAnswer } from './creation-branch.ts';
import { MIN_POSITION_FIELD, parseMinPosition, POSITION_HEADER } from '../pipeline/read-positions.ts';
import type { ReadPositions } from '../pipeline/read-positions.ts';

export interface PetRoutesOptions {
  readonly ports: PetStorePorts;
  /** The deployment's public base address including /v1, for absolute Location and Link headers. */
  readonly publicBaseUrl: () => string;
  /** When given, listing answers are cached (and kept exact by it), and cached ones answered before the app (`listing-cache/cached-listing.ts`). */
  readonly listingCache?: ListingCache | undefined;
  /** What the routes call; the application's own use cases unless given (traced ones, say). */
  readonly useCases?: PetUseCases | undefined;
  /** Where reads that ask for "at least this new" are held to it, and writes say their position. */
  readonly readPositions: ReadPositions;
  /** The checks before any route (`guards/guards.ts`), the app's own list, for the branches. */
  readonly guards: readonly Guard[];
  /** How the app answers a failure, for the creation branch. */
  readonly problemOf: ProblemOf;
}

/**
 * The pet operations under /v1, keyed: each checks the key first, then path, headers, query and body, in
 * that order. A creation, and a cached listing, are answered by branches before the app (`creation-branch.ts`,
 * `createCachedListingBranch`); the deprecated `getPet` carries its marks on every answer.
 */
export function createPetRoutes(options: PetRoutesOptions): readonly Route[] {
  const { ports, publicBaseUrl, listingCache, useCases = PET_USE_CASES, readPositions, guards, problemOf } = options;
  const { addPet, changePetStatus, getPet, listPetPage } = useCases;
  const router = declareRoutes({ keyed: true });
  const cachedListing = listingCache && createCachedListingBranch({ cache: listingCache, guards, readPositions });

  // A cached answer is sent without a promise of its own; a query the cached-listing branch found uncached is not looked up again.
  // A read that names a position newer than this instance has seen waits for it first (see read-positions.ts).
  router.get('listPets', LISTING_PATH, { branch: cachedListing }, (ctx) => {
    const minPosition = parseMinPosition(ctx.headers[MIN_POSITION_FIELD]);
    if (minPosition !== undefined && minPosition > readPositions.reached) {
      return readPositions.reach(minPosition).then(() => listing(ctx, listingCache?.get(ctx.querystring)));
    }
    return listing(ctx, stateOf(ctx).listingNotCached ? undefined : listingCache?.get(ctx.querystring));
  });

  /** A cached answer where the cache has one (on PostgreSQL once it has looked at the log), else one read now. */
  function listing(ctx: RouteContext, cached: ReturnType<ListingCache['get']>): void | Promise<void> {
    // A look for other instances' commits that failed or took too long: the database itself answers, as in the cached-listing branch.
    if (cached instanceof Promise) return cached.then((answer) => listing(ctx, answer), () => listing(ctx, undefined));
    if (cached) return sendListing(ctx, cached);
    return readListing(ctx.querystring).then((answer) => sendListing(ctx, answer));
  }

  /** Reads the page from the catalogue as JSON text, and caches it when nothing changed meanwhile. */
  async function readListing(querystring: string): Promise<ListingAnswer> {
    const mark = listingCache?.mark() ?? 0;
    const page = await listPetPage(ports, parseListQuery(querystring));
    const answer: ListingAnswer = {
      body: Buffer.from(JSON.stringify(page.pets)),
      link: page.nextAfter === undefined ? undefined : nextPageLink(publicBaseUrl(), '/pets', { status: page.scope.status }, page.limit, page.nextAfter),
    };
    listingCache?.set(querystring, mark, answer, page.scope);
    return answer;
  }

  /** POST /v1/pets once the key is checked (a `Creation`): its route's handler and branch both answer with it (`creation-branch.ts`). */
  async function createPet(request: IncomingMessage, state: RequestState, apiKeyId: string): Promise<CreatedAnswer> {
    const idempotencyKey = parseIdempotencyKey(request.headers['idempotency-key'] as string | undefined);
    const newPet: NewPet = readBody(await readJsonBody(request, NEW_PET_TYPES), NEW_PET);
    const { pet, position } = await addPet(ports, newPet, requestContextOf(state, apiKeyId), idempotencyKey === undefined ? {} : { idempotencyKey });
    return { headers: { [POSITION_HEADER]: observedPosition(position), Location: `${publicBaseUrl()}/pets/${pet.id}`, 'Content-Type': JSON_TYPE }, body: JSON.stringify(pet) };
  }

  router.post('createPet', CREATE_PATH, { branch: createCreationBranch(CREATE_PATH, guards, problemOf, createPet) }, creationHandler(createPet));

  router.get('getPet', '/v1/pets/:petId', { marks: deprecated('/pets', publicBaseUrl) }, async (ctx) => {
    const id = petIdFromPath(ctx);
    const minPosition = parseMinPosition(ctx.headers[MIN_POSITION_FIELD]);
    if (minPosition !== undefined) await readPositions.reach(minPosition);
    const { pet, version } = await getPet(ports, id);
    ctx.set('ETag', etagFor(version));
    sendJson(ctx, pet);
  });

  // Experimental: not in interface 1.0.0.
  router.patch(
    'changePetStatus',
    '/v1/pets/:petId',
    async (ctx, next) => {
      petIdFromPath(ctx);
      parseIfMatch(ctx.headers['if-match']);
      await next();
    },
    requireJsonBody(['application/json', 'application/merge-patch+json']),
    async (ctx) => {
      const ifVersion = parseIfMatch(ctx.headers['if-match']);
      const { status } = readBody(jsonBodyOf(ctx), STATUS_PATCH);
      const changed = await changePetStatus(
        ports,
        ifVersion === undefined ? { id: petIdFromPath(ctx), status } : { id: petIdFromPath(ctx), status, ifVersion },
        requestContext(ctx),
      );
      ctx.set(POSITION_HEADER, observedPosition(changed.position));
      ctx.set('ETag', etagFor(changed.version));
      sendJson(ctx, changed.pet);
    },
  );

  /** A write's position as its answer's header gives it; this instance now knows its reads include it. */
  function observedPosition(position: number): string {
    readPositions.observe(position);
    return String(position);
  }

  return router.routes;
}

function sendListing(ctx: RouteContext, answer: ListingAnswer): void {
  if (answer.link !== undefined) ctx.set('Link', answer.link);
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = answer.body;
}

const NEW_PET_TYPES = ['application/json'];
// Checked once each, by the one body check every route uses (`parsing/checked-body.ts`). The rules on a
// new pet's values are the domain's (`checkNewPet`), checked once by the use case.
const NEW_PET = bodyShape(NewPetSchema, 'a NewPet', { checkValues: false });
const STATUS_PATCH = bodyShape(StatusPatchSchema, 'a status change');
const LISTING_PATH = '/v1/pets';
const CREATE_PATH = '/v1/pets';

/** A JSON answer: its type set before its text, so that Koa neither looks the type up nor serialises the value again. */
function sendJson(ctx: RouteContext, value: unknown): void {
  ctx.set('Content-Type', JSON_TYPE);
  ctx.body = JSON.stringify(value);
}

/** The path's pet id; ids that cannot name a pet are 404 here, before any lookup. */
function petIdFromPath(ctx: RouteContext): number {
  const text = ctx.params.petId!;
  const id = parsePetId(text);
  if (id === undefined) throw new PetNotFound(text);
  return id;
}

function requestContext(ctx: RouteContext): RequestContext {
  return requestContextOf(stateOf(ctx), keyIdOf(ctx));
}

function requestContextOf({ requestId, traceId }: RequestState, apiKeyId: string): RequestContext {
  return traceId === undefined ? { requestId, apiKeyId } : { requestId, apiKeyId, traceId };
}
