import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NODE_TS_ARGS } from '../support/processes.ts';
import { logLines } from './fixtures/log-lines-expected.ts';

describe('the buffered stdout of the request log', () => {
  it('writes every line, whole and in order, across chunks and on a clean exit', () => {
    const script = fileURLToPath(new URL('./fixtures/log-lines.ts', import.meta.url));
    const written = execFileSync(process.execPath, [...NODE_TS_ARGS, script], { maxBuffer: 64 * 1024 * 1024 });
    const expected = Buffer.from(logLines().join(''));
    assert.equal(written.length, expected.length);
    assert.ok(written.equals(expected));
  });
});
