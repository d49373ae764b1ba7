import type { Context, Next } from 'koa';
import { GET_PET_DEPRECATION, GET_PET_SUNSET } from '../../../contract/deprecations.ts';
import type { Guard } from './guards.ts';

type AnswerHeaders = Readonly<Record<string, string>>;

/** A route's mark that its operation is deprecated: the headers every answer of it carries. */
export interface DeprecationMark {
  (ctx: Context, next: Next): Promise<void>;
  readonly deprecationHeaders: () => AnswerHeaders;
}

/**
 * Marks a route deprecated, pointing at its successor. The mark does nothing as the route runs: the
 * guards (`markRoute`) set its headers before any check, so that every answer carries them, refusals too.
 */
export function markDeprecated(successorPath: string, publicBaseUrl: () => string): DeprecationMark {
  const deprecationHeaders = (): AnswerHeaders => ({
    Deprecation: GET_PET_DEPRECATION,
    Sunset: GET_PET_SUNSET,
    Link: `<${publicBaseUrl()}${successorPath}>; rel="successor-version"`,
  });
  return Object.assign((_ctx: Context, next: Next) => next(), { deprecationHeaders });
}

/** The deprecation headers of the marked middleware in a route's stack, if any. */
export function deprecationHeadersIn(stack: readonly unknown[]): AnswerHeaders | undefined {
  const mark = stack.find((middleware): middleware is DeprecationMark => typeof (middleware as Partial<DeprecationMark>).deprecationHeaders === 'function');
  return mark?.deprecationHeaders();
}

/** The first guard: the headers the route carries on every answer (a deprecated operation's). */
export const markRoute: Guard = (_request, response, _state, route) => {
  if (route?.marks !== undefined) for (const name in route.marks) response.setHeader(name, route.marks[name]!);
  return undefined;
};
