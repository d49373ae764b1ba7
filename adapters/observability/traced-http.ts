import type { IncomingHttpHeaders } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import type { Context as TraceContext, Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { Context, Middleware, Next } from 'koa';
import type { FastPath } from '../http/cached-listing-fast-path.ts';
import { markFailed } from './spans.ts';
import type { Spans } from './spans.ts';

/** The request id the service answered with (X-Request-Id): what its log line and the events it caused carry. */
export const ATTR_REQUEST_ID = 'petstore.request.id';

const propagator = new W3CTraceContextPropagator();

/** The caller's trace, from `traceparent` and `tracestate` (W3C Trace Context); a malformed one is ignored. */
function callerContext(headers: IncomingHttpHeaders): TraceContext {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

function startServerSpan(spans: Spans, method: string, path: string, headers: IncomingHttpHeaders, startTime?: number): { span: Span; parent: TraceContext } {
  const parent = callerContext(headers);
  const span = spans.tracer.startSpan(
    method,
    { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_PATH]: path }, ...(startTime === undefined ? {} : { startTime }) },
    parent,
  );
  return { span, parent };
}

/** Names the span after its route (`POST /v1/pets`), records the outcome and ends it. A 5xx is an error; a 4xx is the caller's. */
function endServerSpan(span: Span, method: string, route: string | undefined, status: number, requestId: string | undefined): void {
  if (route !== undefined) {
    span.setAttribute(ATTR_HTTP_ROUTE, route);
    span.updateName(`${method} ${route}`);
  }
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
  if (requestId !== undefined) span.setAttribute(ATTR_REQUEST_ID, requestId);
  if (status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * The server span of each request the app answers, continuing the caller's trace. First in the
 * chain, so it sees the final status. A recorded trace's id goes to `ctx.state.traceId`, and from
 * there into the metadata of the events the request causes.
 */
export function traceRequests(spans: Spans): Middleware {
  return async function traceRequestsMiddleware(ctx: Context, next: Next): Promise<void> {
    const { span, parent } = startServerSpan(spans, ctx.method, ctx.path, ctx.req.headers);
    const context = span.spanContext();
    if ((context.traceFlags & TraceFlags.SAMPLED) !== 0) ctx.state.traceId = context.traceId;
    try {
      await spans.within(trace.setSpan(parent, span), next);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      const route = ctx._matchedRoute;
      endServerSpan(span, ctx.method, typeof route === 'string' ? route : undefined, ctx.status, ctx.state.requestId);
    }
  };
}

/**
 * The fast path that answers before the app (cached listings), with a server span for each request it
 * answers, from the request's arrival. It answers one route only, so its path is the route template.
 */
export function traceFastPath(spans: Spans, fastPath: FastPath): FastPath {
  return function tracedFastPath(request, response, state) {
    const traced = (answered: boolean) => {
      if (!answered) return false;
      const method = request.method!;
      const path = request.url!.split('?', 1)[0]!;
      const { span } = startServerSpan(spans, method, path, request.headers, state.started);
      endServerSpan(span, method, path, response.statusCode, state.requestId);
      return true;
    };
    const answered = fastPath(request, response, state);
    return typeof answered === 'boolean' ? traced(answered) : answered.then(traced);
  };
}
