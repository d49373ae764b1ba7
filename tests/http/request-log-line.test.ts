import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { jsonString, requestLine } from '../../adapters/observability/request-log.ts';
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
