import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP receiver got it, in either encoding. Ids are lower-case hex; `kind` and `statusCode` are OTLP's numbers. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  /** W3C tracestate, inherited from the caller's. */
  readonly traceState: string | undefined;
  readonly name: string;
  /** 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly resource: Readonly<Record<string, unknown>>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

export interface OtlpReceiver {
  /** Where to send traces, e.g. http://127.0.0.1:40123/v1/traces. */
  readonly url: string;
  /** Every span received so far. */
  readonly spans: ReceivedSpan[];
  /** The headers of each export request. */
  readonly requests: { readonly contentType: string; readonly headers: Readonly<Record<string, string | string[] | undefined>> }[];
  close(): Promise<void>;
}

/** An OTLP/HTTP trace receiver (JSON and protobuf) on a free port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? '';
      requests.push({ contentType, headers: request.headers });
      const body = Buffer.concat(chunks);
      if (request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      if (contentType.startsWith('application/json')) {
        spans.push(...spansFromJson(JSON.parse(body.toString('utf8')) as JsonRequest));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else {
        spans.push(...spansFromProtobuf(body));
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// ExportTraceServiceRequest as OTLP/JSON writes it (opentelemetry-proto's JSON mapping: ids in hex).
interface JsonValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: JsonValue[] };
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; traceState?: string; name: string; kind: number; attributes?: JsonKeyValue[]; status?: { code?: number } }[] }[];
  }[];
}

function jsonValue(value: JsonValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

function jsonAttributes(attributes: JsonKeyValue[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, jsonValue(value)]));
}

function spansFromJson(request: JsonRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap(({ resource, scopeSpans }) =>
    (scopeSpans ?? []).flatMap(({ spans = [] }) =>
      spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        traceState: span.traceState || undefined,
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        statusCode: span.status?.code ?? 0,
        resource: jsonAttributes(resource?.attributes),
      })),
    ),
  );
}

// The same request in protobuf: just enough of the wire format to read what the tests look at.
type Field = { readonly number: number; readonly varint?: bigint; readonly bytes?: Uint8Array };

function fields(bytes: Uint8Array): Field[] {
  const found: Field[] = [];
  let offset = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
    }
  };
  while (offset < bytes.length) {
    const key = Number(varint());
    const number = key >>> 3;
    switch (key & 7) {
      case 0:
        found.push({ number, varint: varint() });
        break;
      case 1:
        offset += 8;
        found.push({ number });
        break;
      case 2: {
        const length = Number(varint());
        found.push({ number, bytes: bytes.subarray(offset, offset + length) });
        offset += length;
        break;
      }
      case 5:
        offset += 4;
        found.push({ number });
        break;
      default:
        throw new Error(`unexpected protobuf wire type ${key & 7}`);
    }
  }
  return found;
}

const messages = (bytes: Uint8Array, number: number) => fields(bytes).filter((field) => field.number === number && field.bytes).map((field) => field.bytes!);
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
const hex = (bytes: Uint8Array | undefined) => (bytes && bytes.length > 0 ? Buffer.from(bytes).toString('hex') : undefined);

function protobufValue(bytes: Uint8Array): unknown {
  const [field] = fields(bytes);
  if (!field) return undefined;
  switch (field.number) {
    case 1:
      return text(field.bytes!);
    case 2:
      return field.varint === 1n;
    case 3:
      return Number(BigInt.asIntN(64, field.varint!));
    case 5:
      return messages(field.bytes!, 1).map(protobufValue);
    default:
      return undefined;
  }
}

function protobufAttributes(keyValues: Uint8Array[]): Record<string, unknown> {
  return Object.fromEntries(keyValues.map((keyValue) => {
    const [key] = messages(keyValue, 1);
    const [value] = messages(keyValue, 2);
    return [text(key!), value ? protobufValue(value) : undefined];
  }));
}

function spansFromProtobuf(body: Uint8Array): ReceivedSpan[] {
  return messages(body, 1).flatMap((resourceSpans) => {
    const [resource] = messages(resourceSpans, 1);
    const resourceAttributes = protobufAttributes(resource ? messages(resource, 1) : []);
    return messages(resourceSpans, 2).flatMap((scopeSpans) =>
      messages(scopeSpans, 2).map((span) => {
        const all = fields(span);
        const bytesOf = (number: number) => all.find((field) => field.number === number)?.bytes;
        const [status] = messages(span, 15);
        return {
          traceId: hex(bytesOf(1))!,
          spanId: hex(bytesOf(2))!,
          parentSpanId: hex(bytesOf(4)),
          traceState: bytesOf(3) && text(bytesOf(3)!),
          name: text(bytesOf(5) ?? new Uint8Array()),
          kind: Number(all.find((field) => field.number === 6)?.varint ?? 0n),
          attributes: protobufAttributes(messages(span, 9)),
          statusCode: Number((status && fields(status).find((field) => field.number === 3)?.varint) ?? 0n),
          resource: resourceAttributes,
        };
      }),
    );
  });
}
