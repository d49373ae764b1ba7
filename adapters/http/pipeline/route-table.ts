import type { Next } from 'koa';
import type { MatchedRoute, Route, RouteContext, RouteHandler } from './request-state.ts';

export interface RouteTable {
  /** The route a method and path are for (a HEAD finds the GET's), or undefined. */
  match(method: string, path: string): MatchedRoute | undefined;
  /** The methods a path answers to, in the table's order (a GET's HEAD before it); empty for an unknown path. */
  methodsAt(path: string): string[];
  /** The template of the first route at a path, whatever its method. */
  templateAt(path: string): string | undefined;
}

interface Compiled {
  readonly route: Route;
  /** Each segment: its literal text, or undefined for a parameter. */
  readonly segments: readonly (string | undefined)[];
  readonly names: readonly string[];
}

/**
 * The service's routes as one table, matched once a request: a path without parameters is one map
 * lookup, the rest compare segment by segment. Two routes for the same method and template are refused.
 */
export function routeTable(routes: readonly Route[]): RouteTable {
  const literal = new Map<string, Route[]>();
  const withParameters: Compiled[] = [];
  const seen = new Set<string>();
  for (const route of routes) {
    const key = `${route.method} ${route.template}`;
    if (seen.has(key)) throw new Error(`two routes for ${key}`);
    seen.add(key);
    const parts = route.template.split('/');
    if (parts.every((part) => !part.startsWith(':'))) {
      literal.set(route.template, [...(literal.get(route.template) ?? []), route]);
    } else {
      withParameters.push({
        route,
        segments: parts.map((part) => (part.startsWith(':') ? undefined : part)),
        names: parts.filter((part) => part.startsWith(':')).map((part) => part.slice(1)),
      });
    }
  }

  /** The parameters of `path` by `compiled`'s template, or undefined where it does not match. */
  function paramsOf(compiled: Compiled, parts: readonly string[]): Record<string, string> | undefined {
    if (parts.length !== compiled.segments.length) return undefined;
    const params: Record<string, string> = {};
    let name = 0;
    for (let index = 0; index < parts.length; index++) {
      const segment = compiled.segments[index];
      const part = parts[index]!;
      if (segment === undefined) {
        if (part === '') return undefined;
        params[compiled.names[name++]!] = decoded(part);
      } else if (segment !== part) {
        return undefined;
      }
    }
    return params;
  }

  // A path without parameters matches the same way every time: its two answers (its method, a GET's HEAD) are made once.
  const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
  const literalMatches = new Map<Route, { readonly exact: MatchedRoute; readonly head: MatchedRoute }>();
  for (const routesAt of literal.values()) {
    for (const route of routesAt) {
      literalMatches.set(route, Object.freeze({
        exact: Object.freeze({ route, params: NO_PARAMS, branch: route.branch }),
        head: Object.freeze({ route, params: NO_PARAMS, branch: undefined }),
      }));
    }
  }
  function match(method: string, path: string): MatchedRoute | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    // A loop rather than `find`: no closure a request.
    const atPath = literal.get(path);
    if (atPath !== undefined) {
      for (const found of atPath) {
        if (found.method === wanted) return method === found.method ? literalMatches.get(found)!.exact : literalMatches.get(found)!.head;
      }
    }
    const parts = path.split('/');
    for (const compiled of withParameters) {
      if (compiled.route.method !== wanted) continue;
      const params = paramsOf(compiled, parts);
      if (params !== undefined) return { route: compiled.route, params, branch: method === compiled.route.method ? compiled.route.branch : undefined };
    }
    return undefined;
  }

  /** Every route at a path, in the table's order. */
  function routesAt(path: string): Route[] {
    const parts = path.split('/');
    const at = new Set<Route>([...(literal.get(path) ?? []), ...withParameters.filter((compiled) => paramsOf(compiled, parts) !== undefined).map((compiled) => compiled.route)]);
    return routes.filter((route) => at.has(route));
  }

  return {
    match,
    methodsAt: (path) => [...new Set(routesAt(path).flatMap((route) => (route.method === 'GET' ? ['HEAD', 'GET'] : [route.method])))],
    templateAt: (path) => routesAt(path)[0]?.template,
  };
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * Declares a file's routes in the order they are tried, each `keyed` or not: `get(name, template,
 * …handlers)`, with `{ marks, branch }` before the handlers where the route has them.
 */
export function declareRoutes(options: { readonly keyed: boolean }) {
  const routes: Route[] = [];
  const declare = (method: Route['method']) =>
    (name: string, template: string, ...rest: [Pick<Route, 'marks' | 'branch'>, ...RouteHandler[]] | RouteHandler[]): void => {
      const [first, ...others] = rest;
      const extras = typeof first === 'function' ? {} : first;
      const handlers = (typeof first === 'function' ? rest : others) as RouteHandler[];
      routes.push({ name, method, template, keyed: options.keyed, ...extras, handlers });
    };
  return { routes, get: declare('GET'), post: declare('POST'), put: declare('PUT'), patch: declare('PATCH'), delete: declare('DELETE') };
}

/** Runs a route's handlers in order, each one's `next` the one after it, the last one's `next` the app's. */
export function runHandlers(handlers: readonly RouteHandler[], ctx: RouteContext, next: Next): Promise<void> {
  const run = (index: number): Promise<void> => {
    if (index === handlers.length) return next();
    try {
      return Promise.resolve(handlers[index]!(ctx, () => run(index + 1))).then(() => undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return run(0);
}
