import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { typeScriptFiles } from '../support/source-files.ts';
import { DECIMAL_INTEGER_PATTERN, isDecimalDigits, parseDecimalInteger, POSITIVE_INTEGER_PATTERN } from '../../contract/decimal-integer.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the one rule for a whole number written as text', () => {
  it('reads plain decimal digits from 0 to 2^53-1, and nothing else', () => {
    for (const [text, value] of [['0', 0], ['7', 7], ['10', 10], ['9007199254740991', 2 ** 53 - 1]] as const) assert.equal(parseDecimalInteger(text), value, text);
    for (const text of ['', '007', '00', '-1', '+5', '1.5', '1e1', '0x10', ' 1', '1 ', '9007199254740992', '99999999999999999', '١']) {
      assert.equal(parseDecimalInteger(text), undefined, JSON.stringify(text));
    }
  });

  it('holds a number to the bounds it is given', () => {
    assert.equal(parseDecimalInteger('0', 1), undefined);
    assert.equal(parseDecimalInteger('100', 1, 100), 100);
    assert.equal(parseDecimalInteger('101', 1, 100), undefined);
  });

  it('tells digits with a leading zero (well-formed, naming nothing) from what is not digits at all', () => {
    assert.equal(isDecimalDigits('007'), true);
    assert.equal(isDecimalDigits('7a'), false);
  });

  it('gives OpenAPI the patterns the parser applies (up to 15 digits, where a pattern can say it)', () => {
    const decimal = new RegExp(DECIMAL_INTEGER_PATTERN);
    const positive = new RegExp(POSITIVE_INTEGER_PATTERN);
    for (const text of ['0', '1', '42', '123456789012345', '007', '-1', '1.0', '+1', '']) {
      assert.equal(decimal.test(text), parseDecimalInteger(text) !== undefined, JSON.stringify(text));
      assert.equal(positive.test(text), parseDecimalInteger(text, 1) !== undefined, JSON.stringify(text));
    }
  });

  it('is written once: no other product file spells a decimal-digits pattern', () => {
    const folders = ['adapters/http', 'adapters/cli', 'adapters/api-keys', 'adapters/webhooks', 'contract'];
    const spelled = folders
      .flatMap((folder) => typeScriptFiles(folder).map((file) => join(root, file)))
      .filter((file) => !file.endsWith(join('contract', 'decimal-integer.ts')))
      .filter((file) => /\^\(0\|\[1-9\]|\^\[1-9\]\[0-9\]|\^\\d|\^\[0-9\][+{]/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    assert.deepEqual(spelled, []);
  });
});
