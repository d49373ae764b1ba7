import { GET_PET_DEPRECATION, GET_PET_SUNSET } from '../../../contract/deprecations.ts';
import type { Guard } from './guards.ts';

type AnswerHeaders = Readonly<Record<string, string>>;

/** The headers every answer of a route carries, by the route's name (`router.get(name, …)`): declared beside the routes. */
export type RouteMarks = Readonly<Record<string, () => AnswerHeaders>>;

/**
 * The headers of a deprecated operation, pointing at its successor. Declared in a router's `RouteMarks`:
 * the guards (`markRoute`) set them before any check, so that every answer carries them, refusals too.
 */
export function deprecated(successorPath: string, publicBaseUrl: () => string): () => AnswerHeaders {
  return () => ({
    Deprecation: GET_PET_DEPRECATION,
    Sunset: GET_PET_SUNSET,
    Link: `<${publicBaseUrl()}${successorPath}>; rel="successor-version"`,
  });
}

/** The first guard: the headers the route carries on every answer (a deprecated operation's). */
export const markRoute: Guard = (_request, response, _state, route) => {
  if (route?.marks !== undefined) for (const name in route.marks) response.setHeader(name, route.marks[name]!);
  return undefined;
};
