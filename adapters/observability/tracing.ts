import type { Logger } from 'pino';
import { ExportResultCode } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { Sampler, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { PetStorePorts, PetUseCases } from '../../application/index.ts';
import type { WriteObserver } from '../store/write/write-observer.ts';
import { createSpans } from './spans.ts';
import { traceAnswers } from './traced-http.ts';
import type { AroundAnswer } from './traced-http.ts';
import { observeWrites, tracePorts, traceUseCases } from './traced-ports.ts';
import type { DatabaseSystem } from './traced-ports.ts';
import type { TraceSampling, TracingConfig } from '../config/tracing-config.ts';

/** What the composition root attaches: each piece decorates a port or hooks into the HTTP layer. */
export interface Tracing {
  /** The server span of each request, around its whole answer. */
  readonly traceAnswers: AroundAnswer;
  /** A span around each query and append. */
  tracePorts(ports: PetStorePorts): PetStorePorts;
  /** A span around each use case. */
  traceUseCases(useCases: PetUseCases): PetUseCases;
  /** For a store that commits in groups: the wait for the commit, and the group's size. */
  readonly observeWrite: WriteObserver;
  /** Exports the spans still buffered; waits at most the export timeout. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  readonly logger: Logger;
  readonly databaseSystem: DatabaseSystem;
}

/**
 * OpenTelemetry's SDK, set up from the configuration alone: spans batched and sent over OTLP/HTTP
 * (protobuf or JSON; only the exporter asked for is loaded). Loaded by the composition root only
 * when tracing is configured. The SDK itself still reads the variables it knows that the
 * configuration does not carry (OTEL_BSP_*, OTEL_SPAN_*_LIMIT, OTEL_EXPORTER_OTLP_COMPRESSION, ...).
 */
export async function startTracing(config: TracingConfig, options: TracingOptions): Promise<Tracing> {
  const { OTLPTraceExporter } = config.protocol === 'http/json'
    ? await import('@opentelemetry/exporter-trace-otlp-http')
    : await import('@opentelemetry/exporter-trace-otlp-proto');
  const exporter = new OTLPTraceExporter({ url: config.endpoint, headers: { ...config.headers }, timeoutMillis: config.timeoutMs });
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: config.serviceName })),
    sampler: samplerFor(config.sampling),
    spanProcessors: [new BatchSpanProcessor(reportingFailures(exporter, options.logger, config.endpoint))],
  });
  const spans = createSpans(provider.getTracer('petstore'));
  return {
    traceAnswers: traceAnswers(spans),
    tracePorts: (ports) => tracePorts(spans, ports, options.databaseSystem),
    traceUseCases: (useCases) => traceUseCases(spans, useCases),
    observeWrite: observeWrites(spans),
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const givenUp = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, config.timeoutMs);
        timer.unref();
      });
      await Promise.race([provider.shutdown(), givenUp]);
      clearTimeout(timer);
    },
  };
}

function samplerFor({ root, parentBased, ratio }: TraceSampling): Sampler {
  const sampler = root === 'always_on' ? new AlwaysOnSampler() : root === 'always_off' ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(ratio);
  return parentBased ? new ParentBasedSampler({ root: sampler }) : sampler;
}

/**
 * The exporter, logging when exports start failing and when they work again (once each, not per
 * batch): without it a wrong endpoint would drop every span in silence. The endpoint is logged
 * without credentials or query; the headers never are.
 */
function reportingFailures(exporter: SpanExporter, logger: Logger, endpoint: string): SpanExporter {
  const { origin, pathname } = new URL(endpoint);
  const where = `${origin}${pathname}`;
  let failing = false;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        const succeeded = result.code === ExportResultCode.SUCCESS;
        if (!succeeded && !failing) logger.warn({ endpoint: where, error: result.error?.message }, 'trace export failed: spans are dropped until it works again');
        if (succeeded && failing) logger.info({ endpoint: where }, 'trace export works again');
        failing = !succeeded;
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
