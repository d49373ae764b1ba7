import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../adapters/config/config.ts';
import { readTracingConfig } from '../../adapters/config/tracing-config.ts';

/** Tracing's configuration, read from OpenTelemetry's standard variables. */

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

function rejects(environment: Record<string, string>, message: RegExp): void {
  assert.throws(() => readTracingConfig(environment), (error: unknown) => error instanceof ConfigError && message.test(error.message));
}

describe('tracing configuration', () => {
  it('is off without any OTEL_* variable, and loadConfig says so', () => {
    assert.equal(readTracingConfig({}), undefined);
    assert.equal(loadConfig({}).tracing, undefined);
  });

  it('is on with OTEL_TRACES_EXPORTER=otlp alone, sending to the default local collector as protobuf', () => {
    assert.deepEqual(readTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp' }), {
      endpoint: 'http://localhost:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'petstore',
      resourceAttributes: {},
      sampling: { root: 'always_on', parentBased: true, ratio: 1 },
    });
  });

  it('is on when an endpoint is configured and OTEL_TRACES_EXPORTER is unset; the base endpoint gets /v1/traces', () => {
    assert.equal(readTracingConfig(ENDPOINT)?.endpoint, 'http://collector:4318/v1/traces');
    assert.equal(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example.com/otlp/' })?.endpoint, 'https://collector.example.com/otlp/v1/traces');
  });

  it('uses OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, before the base endpoint', () => {
    const config = readTracingConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9999/custom' });
    assert.equal(config?.endpoint, 'http://traces:9999/custom');
  });

  it('is off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set', () => {
    assert.equal(readTracingConfig({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }), undefined);
    assert.equal(readTracingConfig({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.notEqual(readTracingConfig({ ...ENDPOINT, OTEL_SDK_DISABLED: 'false' }), undefined);
  });

  it('reads the protocol, the signal-specific variable first', () => {
    assert.equal(readTracingConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })?.protocol, 'http/json');
    assert.equal(readTracingConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })?.protocol, 'http/protobuf');
  });

  it('reads headers (values percent-decoded, the traces ones winning) and the timeout', () => {
    const config = readTracingConfig({
      ...ENDPOINT,
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Basic%20dXNlcjpwYXNz, x-tenant=a',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=b',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
    });
    assert.deepEqual(config?.headers, { authorization: 'Basic dXNlcjpwYXNz', 'x-tenant': 'b' });
    assert.equal(config?.timeoutMs, 2500);
  });

  it('names the service from OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES, else petstore', () => {
    const attributes = 'service.name=from-attributes,deployment.environment.name=staging,team=pets%20and%20more';
    assert.equal(readTracingConfig({ ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: attributes, OTEL_SERVICE_NAME: 'catalogue' })?.serviceName, 'catalogue');
    const fromAttributes = readTracingConfig({ ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: attributes });
    assert.equal(fromAttributes?.serviceName, 'from-attributes');
    assert.deepEqual(fromAttributes?.resourceAttributes, { 'deployment.environment.name': 'staging', team: 'pets and more' });
  });

  it('reads every sampler the specification names, with its ratio', () => {
    const sampling = (sampler: string, argument?: string) =>
      readTracingConfig({ ...ENDPOINT, OTEL_TRACES_SAMPLER: sampler, ...(argument === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: argument }) })?.sampling;
    assert.deepEqual(sampling('always_on'), { root: 'always_on', parentBased: false, ratio: 1 });
    assert.deepEqual(sampling('always_off'), { root: 'always_off', parentBased: false, ratio: 1 });
    assert.deepEqual(sampling('traceidratio', '0.25'), { root: 'traceidratio', parentBased: false, ratio: 0.25 });
    assert.deepEqual(sampling('parentbased_traceidratio', '.5'), { root: 'traceidratio', parentBased: true, ratio: 0.5 });
    assert.deepEqual(sampling('parentbased_always_off'), { root: 'always_off', parentBased: true, ratio: 1 });
    assert.deepEqual(sampling('parentbased_traceidratio'), { root: 'traceidratio', parentBased: true, ratio: 1 });
  });

  it('refuses what it cannot honour, naming the variable', () => {
    rejects({ OTEL_TRACES_EXPORTER: 'zipkin' }, /^OTEL_TRACES_EXPORTER is invalid \("zipkin"\)/);
    rejects({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /^OTEL_EXPORTER_OTLP_PROTOCOL is invalid \("grpc"\).*grpc is not supported/);
    rejects({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_ENDPOINT is invalid/);
    rejects({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://collector/v1/traces' }, /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is invalid/);
    rejects({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /^OTEL_TRACES_SAMPLER is invalid/);
    rejects({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, /^OTEL_TRACES_SAMPLER_ARG is invalid/);
    rejects({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, /^OTEL_TRACES_SAMPLER_ARG is invalid/);
    rejects({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TIMEOUT: '0' }, /^OTEL_EXPORTER_OTLP_TIMEOUT is invalid/);
    rejects({ ...ENDPOINT, OTEL_SDK_DISABLED: 'yes' }, /^OTEL_SDK_DISABLED is invalid/);
    assert.throws(() => loadConfig({ OTEL_TRACES_EXPORTER: 'console' }), ConfigError);
  });

  it('never repeats a header value in its message: they hold credentials', () => {
    for (const headers of ['authorization', 'x-token=%E0%A4%A', 'bad name=s3cret-value', 'x-token=line%0Abreak-s3cret']) {
      assert.throws(
        () => readTracingConfig({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: headers }),
        (error: unknown) => error instanceof ConfigError && /^OTEL_EXPORTER_OTLP_HEADERS is invalid/.test(error.message) && !/s3cret|%E0|line/.test(error.message),
      );
    }
  });
});
