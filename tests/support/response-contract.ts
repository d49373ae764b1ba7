import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Checks an answer against the service's own OpenAPI document: the status must be one the document
 * lists for that operation, its required headers present, and the body valid against the schema given
 * for that status and media type. Answers to requests that match no operation (unknown paths, other
 * methods) must still be Error bodies when they are errors. Every HTTP test goes through this, so the
 * document and the behaviour cannot drift apart.
 */
export interface ResponseContract {
  check(method: string, target: string, answer: { status: number; headers: Headers; body: string }): void;
}

type Json = Record<string, any>;

const DOCUMENT_ID = 'https://petstore.test/openapi.json';

export interface DocumentSchemas {
  /** A JSON Schema validator (Ajv, not TypeBox) for the schema at `pointer` in the document, e.g. `/components/schemas/Pet`. */
  validatorAt(pointer: string): ValidateFunction;
  errorsText(validate: ValidateFunction): string;
}

/** The schemas of an OpenAPI 3.1 document, checked by Ajv as JSON Schema 2020-12 with the formats the document uses. */
export function documentSchemas(document: Json): DocumentSchemas {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addFormat('uri', (value: string) => URL.canParse(value));
  ajv.addFormat('date-time', (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)));
  ajv.addSchema(document, DOCUMENT_ID);
  const compiled = new Map<string, ValidateFunction>();
  return {
    validatorAt(pointer) {
      let validate = compiled.get(pointer);
      if (!validate) {
        validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
        compiled.set(pointer, validate);
      }
      return validate;
    },
    errorsText: (validate) => ajv.errorsText(validate.errors),
  };
}

export function responseContract(document: Json): ResponseContract {
  const schemas = documentSchemas(document);
  const prefix = new URL((document.servers as { url: string }[])[0]!.url).pathname; // "/v1"
  const templates = Object.keys(document.paths as Json).map((template) => ({
    template,
    pattern: new RegExp(`^${escapeRegExp(prefix + template).replace(/\\\{[^}]+\\\}/g, '[^/]+')}$`),
  }));

  function resolve<T = Json>(value: Json): T {
    if (typeof value?.$ref !== 'string') return value as T;
    return (value.$ref as string).slice(2).split('/').map(unescapePointer).reduce((node: Json, key) => node[key], document) as T;
  }

  function validateBody(pointer: string, body: string, what: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      assert.fail(`${what}: the body is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
    }
    const validate = schemas.validatorAt(pointer);
    if (!validate(parsed)) {
      assert.fail(`${what}: the body does not match the document (${pointer}): ${schemas.errorsText(validate)}; body: ${body.slice(0, 300)}`);
    }
  }

  return {
    check(method, target, answer) {
      const path = target.split('?')[0]!;
      const bodyless = method === 'HEAD' || answer.status === 204 || answer.status === 304;
      const operationMethod = (method === 'HEAD' ? 'get' : method.toLowerCase());
      const template = templates.find((candidate) => candidate.pattern.test(path))?.template;
      const operation = template === undefined ? undefined : (document.paths[template] as Json)[operationMethod] as Json | undefined;
      const what = `${method} ${target} → ${answer.status}`;
      if (!operation) {
        if (answer.status < 400) return; // not an API operation (documents, probes, preflights)
        assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, `${what}: an error must be JSON`);
        if (!bodyless) validateBody('/components/schemas/Error', answer.body, what);
        return;
      }
      const listed = Object.keys(operation.responses as Json);
      const response = (operation.responses as Json)[String(answer.status)] as Json | undefined;
      assert.ok(response, `${what}: the document lists only ${listed.join(', ')} for ${operation.operationId}`);
      const resolved = resolve(response);
      for (const [name, header] of Object.entries((resolved.headers ?? {}) as Json)) {
        if (resolve(header).required) assert.ok(answer.headers.has(name), `${what}: the document requires the ${name} header`);
      }
      if (bodyless) return;
      const content = resolved.content as Json | undefined;
      if (!content) {
        assert.equal(answer.body, '', `${what}: the document gives no body for this answer`);
        return;
      }
      const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
      assert.ok(Object.hasOwn(content, mediaType), `${what}: Content-Type ${mediaType} is not one the document gives (${Object.keys(content).join(', ')})`);
      const responsePointer = typeof response.$ref === 'string'
        ? (response.$ref as string).slice(1)
        : ['', 'paths', template!, operationMethod, 'responses', String(answer.status)].map(escapePointer).join('/');
      const pointer = `${responsePointer}/content/${escapePointer(mediaType)}/schema`;
      validateBody(pointer, answer.body, what);
    },
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapePointer(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
