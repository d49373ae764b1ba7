import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readDeprecationNotice } from '../../client/deprecation-notice.ts';
import { linkTarget } from '../../client/link-header.ts';

describe('linkTarget: reading Link headers (RFC 8288)', () => {
  const base = 'https://api.example.com/v1/pets?limit=5';

  it('finds the link of a relation among several, resolved against the answer\'s URL', () => {
    const header = '<https://api.example.com/v1/pets?after=5>; rel="prev", </v1/pets?limit=5&after=10>; rel="next"';
    assert.equal(linkTarget(header, 'next', base)?.href, 'https://api.example.com/v1/pets?limit=5&after=10');
    assert.equal(linkTarget(header, 'prev', base)?.href, 'https://api.example.com/v1/pets?after=5');
  });

  it('reads unquoted, upper-case and space-separated relation types', () => {
    assert.equal(linkTarget('<a>; REL=next', 'next', base)?.href, 'https://api.example.com/v1/a');
    assert.equal(linkTarget('<b>; rel="last Next"', 'next', base)?.href, 'https://api.example.com/v1/b');
  });

  it('is not fooled by ; , or rel= inside a quoted parameter or the target', () => {
    const header = '<https://x.test/p?a=1,2;b>; title="see; rel=next, or not"; rel="prev"';
    assert.equal(linkTarget(header, 'next', base), undefined);
    assert.equal(linkTarget(header, 'prev', base)?.href, 'https://x.test/p?a=1,2;b');
  });

  it('answers undefined without a header, without the relation, or for a target that is no URL', () => {
    assert.equal(linkTarget(null, 'next', base), undefined);
    assert.equal(linkTarget('<a>; rel="prev"', 'next', base), undefined);
    assert.equal(linkTarget('<relative>; rel="next"', 'next', undefined), undefined);
  });
});

describe('readDeprecationNotice', () => {
  const answer = (headers: Record<string, string>) => new Response(null, { headers });

  it('reads the RFC 9745 date, the Sunset and the successor', () => {
    const notice = readDeprecationNotice('getPet', answer({
      deprecation: '@1795219200',
      sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      link: '<https://api.example.com/v1/pets>; rel="successor-version"',
    }));
    assert.deepEqual(notice, {
      operation: 'getPet',
      deprecatedAt: new Date('2026-11-21T00:00:00Z'),
      sunsetAt: new Date('2030-12-05T00:00:00Z'),
      successor: 'https://api.example.com/v1/pets',
      message: 'petstore: getPet is deprecated since 2026-11-21 and will stop working on 2030-12-05; its successor is https://api.example.com/v1/pets',
    });
  });

  it('accepts the older forms: an HTTP date, or "true" with no date', () => {
    assert.equal(readDeprecationNotice('getPet', answer({ deprecation: 'Sat, 21 Nov 2026 00:00:00 GMT' }))?.deprecatedAt?.toISOString(), '2026-11-21T00:00:00.000Z');
    const undated = readDeprecationNotice('getPet', answer({ deprecation: 'true' }));
    assert.equal(undated?.deprecatedAt, undefined);
    assert.equal(undated?.message, 'petstore: getPet is deprecated');
  });

  it('says nothing about an answer without a Deprecation header, whatever else it carries', () => {
    assert.equal(readDeprecationNotice('getPet', answer({ sunset: 'Thu, 05 Dec 2030 00:00:00 GMT' })), undefined);
  });
});
