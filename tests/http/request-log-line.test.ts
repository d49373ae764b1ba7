import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { jsonString, requestIdFor, requestIdSource, requestLine } from '../../adapters/observability/request-log.ts';
import type { RequestFields } from '../../adapters/observability/request-log.ts';

function capturingLogger(level: string, bindings: Record<string, unknown> = {}) {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(line) }).child(bindings);
  return { logger, lines };
}

const withoutTime = (line: string) => {
  const { time, ...rest } = JSON.parse(line) as Record<string, unknown>;
  assert.equal(typeof time, 'number');
  return rest;
};

describe('request log line', () => {
  const awkward: RequestFields = {
    requestId: 'id with "quotes" and \\ backslash', method: 'PATCH', route: null, path: '/v1/pets/%22x%22/ü\u2028',
    status: 404, durationMs: 12.345, apiKeyId: null,
  };
  const usual: RequestFields = { requestId: 'c0ffee', method: 'GET', route: '/v1/pets', path: '/v1/pets', status: 200, durationMs: 0.5, apiKeyId: 'env:0123456789ab' };

  for (const [name, fields] of [['usual', usual], ['awkward', awkward]] as const) {
    it(`writes the line logger.info(fields, "request") would write, keys in the same order (${name} fields)`, () => {
      const { logger, lines } = capturingLogger('info', { service: 'petstore' });
      requestLine(logger)(fields);
      logger.info(fields, 'request');
      assert.equal(lines.length, 2);
      assert.ok(lines.every((line) => line.endsWith('}\n')));
      const [mine, pinos] = lines.map(withoutTime);
      assert.deepEqual(mine, pinos);
      assert.deepEqual(Object.keys(mine!), Object.keys(pinos!));
      assert.equal(mine!.service, 'petstore', 'with the logger\'s bindings');
    });
  }

  it('quotes each string exactly as JSON.stringify does: every UTF-16 code unit, paired and lone surrogates', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = `a${String.fromCharCode(unit)}b`;
      assert.equal(jsonString(text), JSON.stringify(text), `U+${unit.toString(16)}`);
    }
    for (const text of ['', '"', '\\', '\ud83d\ude00', '\ud83d', '\ude00x', '/v1/pets/%22x%22', 'c0ffee-0123']) assert.equal(jsonString(text), JSON.stringify(text));
  });

  it('writes nothing when info is not enabled', () => {
    const { logger, lines } = capturingLogger('warn');
    requestLine(logger)(usual);
    assert.deepEqual(lines, []);
  });
});

describe('new request ids', () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('are UUID-shaped and never repeat within a process', () => {
    const next = requestIdSource();
    const ids = Array.from({ length: 10_000 }, () => next());
    for (const id of ids) assert.match(id, UUID_V4);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('differ between processes: each draws its own random part', () => {
    const [one, other] = [requestIdSource(), requestIdSource()];
    assert.notEqual(one().slice(0, 24), other().slice(0, 24));
  });

  it('draw a new random part when the counter would wrap, rather than repeat an id', () => {
    const next = requestIdSource(undefined, 2 ** 48 - 1);
    const last = next();
    const wrapped = next();
    assert.match(last, /-ffffffffffff$/);
    assert.match(wrapped, /-000000000000$/);
    assert.notEqual(wrapped.slice(0, 24), last.slice(0, 24));
  });

  it('keep the client\'s own id when acceptable, else make one', () => {
    assert.equal(requestIdFor('client-id-1'), 'client-id-1');
    assert.match(requestIdFor('bad id'), UUID_V4);
    assert.match(requestIdFor(undefined), UUID_V4);
  });
});
