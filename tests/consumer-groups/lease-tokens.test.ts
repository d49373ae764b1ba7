import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newLeaseToken } from '../../adapters/store/lease-tokens.ts';

describe('lease tokens', () => {
  it('are 12 random bytes as base64url, none twice, across many draws of the pool', () => {
    const tokens = Array.from({ length: 5000 }, () => newLeaseToken());
    for (const token of tokens) assert.match(token, /^[A-Za-z0-9_-]{16}$/);
    assert.equal(new Set(tokens).size, tokens.length);
    assert.ok(new Set(tokens.map((token) => token[0])).size > 32, 'their first characters spread over the alphabet');
  });
});
