import type { Context, Next } from 'koa';
import { GET_PET_DEPRECATION, GET_PET_SUNSET } from '../../contract/deprecations.ts';

type AnswerHeaders = Readonly<Record<string, string>>;

/** A route's middleware that marks it deprecated, with the headers it adds, for answers given before any route runs. */
export interface DeprecationMark {
  (ctx: Context, next: Next): Promise<void>;
  readonly deprecationHeaders: () => AnswerHeaders;
}

/** Marks every answer of a deprecated operation, errors included, and points at its successor. */
export function markDeprecated(successorPath: string, publicBaseUrl: () => string): DeprecationMark {
  const deprecationHeaders = (): AnswerHeaders => ({
    Deprecation: GET_PET_DEPRECATION,
    Sunset: GET_PET_SUNSET,
    Link: `<${publicBaseUrl()}${successorPath}>; rel="successor-version"`,
  });
  return Object.assign(
    async function markDeprecatedMiddleware(ctx: Context, next: Next): Promise<void> {
      ctx.set(deprecationHeaders());
      await next();
    },
    { deprecationHeaders },
  );
}

/** The deprecation headers of the first marked middleware in a route's stack, if any. */
export function deprecationHeadersIn(stack: readonly unknown[]): AnswerHeaders | undefined {
  const mark = stack.find((middleware): middleware is DeprecationMark => typeof (middleware as Partial<DeprecationMark>).deprecationHeaders === 'function');
  return mark?.deprecationHeaders();
}
