import type { IncomingMessage, ServerResponse } from 'node:http';
import { admitted } from '../guards/guards.ts';
import type { Guard } from '../guards/guards.ts';
import { problemAnswer } from '../pipeline/errors.ts';
import type { ProblemOf } from '../pipeline/errors.ts';
import { sendAnswer } from '../pipeline/request-pipeline.ts';
import { keyIdOf, stateOf } from '../pipeline/request-state.ts';
import type { AnswerBranch, RequestState, RouteHandler } from '../pipeline/request-state.ts';
import type { Answered } from '../../observability/request-log.ts';

/** A creation's 201: its headers and body. */
export interface CreatedAnswer {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * A creation once the key is checked: the checks in their order (headers, then the body), then the use
 * case; its 201's headers and body. The route's Koa handler and its branch both answer with it.
 */
export type Creation = (request: IncomingMessage, state: RequestState, apiKeyId: string) => Promise<CreatedAnswer>;

/** The creation as the route's Koa handler (for what the branch leaves to the app). */
export function creationHandler(create: Creation): RouteHandler {
  return async (ctx) => {
    const created = await create(ctx.req, stateOf(ctx), keyIdOf(ctx));
    ctx.status = 201;
    ctx.set(created.headers);
    ctx.body = created.body;
  };
}

/**
 * A creation at `path` as its route's branch, tried before the Koa app: once the guards let it through
 * (`guards/guards.ts`), `create` answers, and a failure is rendered as the app renders it. A refusal is
 * the app's, and so is a target with a query string, which a creation never needs (the branch-equivalence
 * tests send the same body both ways by it).
 */
export function createCreationBranch(path: string, guards: readonly Guard[], problemOf: ProblemOf, create: Creation): AnswerBranch {
  return (request, response, state) => {
    if (request.url !== path) return undefined;
    const passed = admitted(guards, request, response, state);
    if (passed instanceof Promise) return passed.then((settled) => (settled ? answer(request, response, state) : undefined));
    return passed ? answer(request, response, state) : undefined;
  };

  function answer(request: IncomingMessage, response: ServerResponse, state: RequestState): Promise<Answered> {
    const keyId = state.keyId!;
    const answered = { route: path, path, keyId };
    return create(request, state, keyId).then(
      (created) => sendAnswer(response, state, 201, created.headers, created.body, answered),
      (error: unknown) => sendAnswer(response, state, ...problemAnswer(request, problemOf(error, state.requestId)), answered),
    );
  }
}
