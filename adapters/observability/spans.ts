import { AsyncLocalStorage } from 'node:async_hooks';
import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';

/**
 * The service's spans and the context they nest in. The context lives in an AsyncLocalStorage of
 * this service's own, not in OpenTelemetry's global context manager: nothing global is registered,
 * so services sharing a process (tests) never see each other's spans.
 */
export interface Spans {
  readonly tracer: Tracer;
  /** The context of the span running now (ROOT_CONTEXT outside any). */
  current(): Context;
  /** Runs `work` with `context` current. */
  within<T>(context: Context, work: () => T): T;
  /**
   * Runs `work` in a new child of the current span, ended when `work` settles and marked when it
   * fails. Outside a recorded trace there is nothing to be a child of: `work` runs without a span.
   */
  run<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T>;
}

const NO_SPAN = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

export function createSpans(tracer: Tracer): Spans {
  const storage = new AsyncLocalStorage<Context>();
  const current = () => storage.getStore() ?? ROOT_CONTEXT;
  return {
    tracer,
    current,
    within: (context, work) => storage.run(context, work),
    async run(name, options, work) {
      const parent = current();
      if (!trace.getSpan(parent)?.isRecording()) return work(NO_SPAN);
      const span = tracer.startSpan(name, options, parent);
      try {
        return await storage.run(trace.setSpan(parent, span), () => work(span));
      } catch (error) {
        markFailed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  };
}

/** Marks a span whose work threw: `error.type` is the error's class name. */
export function markFailed(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : typeof error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
