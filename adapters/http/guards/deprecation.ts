import { GET_PET_DEPRECATION, GET_PET_SUNSET } from '../../../contract/deprecations.ts';
import { addAnswerHeader } from '../pipeline/request-state.ts';
import type { RouteMarks } from '../pipeline/request-state.ts';
import type { Guard } from './guards.ts';

/**
 * The headers of a deprecated operation, pointing at its successor. Declared as the route's marks in the
 * route table: the guards (`markRoute`) set them before any check, so that every answer carries them, refusals too.
 */
export function deprecated(successorPath: string, publicBaseUrl: () => string): RouteMarks {
  return () => ({
    Deprecation: GET_PET_DEPRECATION,
    Sunset: GET_PET_SUNSET,
    Link: `<${publicBaseUrl()}${successorPath}>; rel="successor-version"`,
  });
}

/** The first guard: the headers the route carries on every answer (a deprecated operation's). */
export const markRoute: Guard = (_request, response, state, route) => {
  if (route?.marks === undefined) return undefined;
  const marks = route.marks();
  for (const name in marks) addAnswerHeader(state, response, name, marks[name]!);
  return undefined;
};
