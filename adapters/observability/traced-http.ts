import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import type { Context as TraceContext, Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { Answered } from './request-log.ts';
import type { Spans } from './spans.ts';

/** What a request's trace reads of its state, and where it leaves the trace's id for the events the request causes. */
export interface TracedRequestState {
  readonly requestId: string;
  /** `performance.now()` when the request arrived: the span begins there. */
  readonly started: number;
  traceId: string | undefined;
}

/** Answers a request on Node's response and says how. */
export type AnswerRequest<State extends TracedRequestState> = (request: IncomingMessage, response: ServerResponse, state: State) => Answered | Promise<Answered>;

/** Wraps the whole answer, whichever branch gives it: the request pipeline's one place for its trace. */
export type AroundAnswer = <State extends TracedRequestState>(answer: AnswerRequest<State>) => AnswerRequest<State>;

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
 * The server span of each request, whichever branch of the pipeline answers it, continuing the
 * caller's trace and begun at the request's arrival. A recorded trace's id goes to the request's state,
 * and from there into the metadata of the events the request causes.
 */
export function traceAnswers(spans: Spans): AroundAnswer {
  return (answer) => function tracedAnswer(request, response, state) {
    const method = request.method!;
    const { span, parent } = startServerSpan(spans, method, request.url!.split('?', 1)[0]!, request.headers, state.started);
    const context = span.spanContext();
    if ((context.traceFlags & TraceFlags.SAMPLED) !== 0) state.traceId = context.traceId;
    const ended = (answered: Answered): Answered => {
      endServerSpan(span, method, answered.route ?? undefined, answered.status, state.requestId);
      return answered;
    };
    const answered = spans.within(trace.setSpan(parent, span), () => answer(request, response, state));
    return answered instanceof Promise ? answered.then(ended) : ended(answered);
  };
}
