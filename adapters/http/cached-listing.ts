import { HttpProblem } from './errors.ts';
import type { BranchAdmission } from './branch-admission.ts';
import { JSON_TYPE } from './listing-cache.ts';
import type { ListingAnswer, ListingCache } from './listing-cache.ts';
import type { AnswerBranch, Answered } from './request-pipeline.ts';
import { MIN_POSITION_FIELD, minPositionOf } from './read-positions.ts';
import type { ReadPositions } from './read-positions.ts';

export interface CachedListingOptions {
  readonly cache: ListingCache;
  /** The app's checks before a route (`branch-admission.ts`). */
  readonly admission: BranchAdmission;
  /** A request asking for a position newer than this instance's reads are known to include is the app's to wait for. */
  readonly readPositions: Pick<ReadPositions, 'reached'>;
}

// The only path answered here, and so also the route template it reports.
const LISTING_PATH = '/v1/pets';

/**
 * The pipeline's branch for cached listings, tried before the Koa app: a context, the middleware chain
 * and the router cost more than the rest of such an answer. The checks are the app's own, decided once
 * on the request's state (which the app then reads); only a 200 is answered here, anything else is
 * left to the app.
 */
export function createCachedListingBranch(options: CachedListingOptions): AnswerBranch {
  const { cache, admission, readPositions } = options;
  return function answerCachedListing(request, response, state) {
    if (request.method !== 'GET') return undefined;
    const target = request.url!;
    const queryStart = target.indexOf('?');
    if ((queryStart < 0 ? target : target.slice(0, queryStart)) !== LISTING_PATH) return undefined;
    const minPosition = minPositionOf(request.headers[MIN_POSITION_FIELD]);
    if (minPosition !== undefined && (minPosition instanceof HttpProblem || minPosition > readPositions.reached)) return undefined;
    const keyId = admission.admit(request, state);
    if (keyId === undefined) return undefined;
    const found = cache.get(queryStart < 0 ? '' : target.slice(queryStart + 1));
    // When the look for other instances' commits fails, the app reads the database and answers for it.
    if (found instanceof Promise) return found.then((answer) => answerWith(answer, keyId), () => answerWith(undefined, keyId));
    return answerWith(found, keyId);

    function answerWith(answer: ListingAnswer | undefined, keyId: string): Answered | undefined {
      if (answer === undefined) {
        state.listingNotCached = true;
        return undefined;
      }
      admission.markAnswer(response, state);
      if (answer.link !== undefined) response.setHeader('Link', answer.link);
      response.setHeader('Content-Type', JSON_TYPE);
      response.setHeader('Content-Length', answer.body.length);
      response.end(answer.body);
      return { route: LISTING_PATH, path: LISTING_PATH, status: 200, keyId };
    }
  };
}
