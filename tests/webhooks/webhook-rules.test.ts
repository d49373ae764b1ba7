import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { afterFailure, retryDelayMs, secretsSigningAt } from '../../application/index.ts';
import { isPublicAddress, parseWebhookUrl, resolveSafeTarget, UnsafeWebhookTarget } from '../../adapters/webhooks/safe-target.ts';
import { retryAfterTime, signedHeaders } from '../../adapters/webhooks/webhook-request.ts';
import { DEFAULT_WEBHOOK_DELIVERY } from '../../adapters/config/config.ts';
import { newWebhookSecret } from '../../adapters/store/tables/sql-webhook-subscriptions.ts';

describe('webhook targets', () => {
  it('tells public addresses from loopback, private, link-local, unspecified, multicast and reserved ones', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8']) assert.equal(isPublicAddress(address), true, address);
    for (const address of [
      '127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '0.0.0.0', '100.64.0.1',
      '224.0.0.1', '239.255.255.250', '255.255.255.255', '240.0.0.1', '::', '::1', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '2001:db8::1', 'not an address',
    ]) assert.equal(isPublicAddress(address), false, address);
  });

  it('judges the IPv4 address inside every IPv6 form that carries one, and refuses the IPv6 special-purpose ranges', () => {
    for (const address of ['2002:808:808::1', '64:ff9b::808:808', '::ffff:93.184.215.14', '2620:4f:8000::1']) assert.equal(isPublicAddress(address), true, address);
    for (const address of [
      '::127.0.0.1', '::7f00:1', '::8.8.8.8', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '64:ff9b:1::7f00:1', '64:ff9b:1::808:808', '64:ff9b::7f00:1',
      '2002:7f00:1::', '2002:a00:1::1', '2002:c0a8:101::1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1', '2001:10::1',
      '100::1', '100::', '3fff::1', '5f00::1', 'fec0::1', '4000::1',
    ]) assert.equal(isPublicAddress(address), false, address);
  });

  it('resolves a name and refuses it when any of its addresses is not public, unless private targets are allowed', async () => {
    await assert.rejects(resolveSafeTarget(new URL('http://localhost:1/'), { allowPrivate: false }), UnsafeWebhookTarget);
    const allowed = await resolveSafeTarget(new URL('http://localhost:1/'), { allowPrivate: true });
    assert.ok(allowed.length > 0 && allowed.every(({ address }) => !isPublicAddress(address)));
    await assert.rejects(resolveSafeTarget(new URL('http://[::1]:1/'), { allowPrivate: false }), UnsafeWebhookTarget);
    assert.deepEqual(await resolveSafeTarget(new URL('https://93.184.215.14/x'), { allowPrivate: false }), [{ address: '93.184.215.14', family: 4 }]);
  });

  it('takes http and https URLs only, without credentials or fragment', () => {
    for (const text of ['ftp://a.example/', 'file:///etc/passwd', 'http://u:p@a.example/', 'https://a.example/#x', '/relative', `https://a.example/${'x'.repeat(2100)}`]) {
      assert.throws(() => parseWebhookUrl(text), UnsafeWebhookTarget, text);
    }
    assert.equal(parseWebhookUrl('https://a.example/hook?x=1').href, 'https://a.example/hook?x=1');
  });
});

describe('webhook signatures and secrets', () => {
  it('signs as the standardwebhooks library verifies, with a secret in its form', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = '{"specversion":"1.0","id":"7"}';
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([secret], 'msg_wh_x_7', timestamp, body);
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.equal(headers['webhook-signature'], new Webhook(secret).sign('msg_wh_x_7', new Date(timestamp * 1000), body));
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
  });

  it('signs with two secrets in one header that a receiver knowing either verifies, and no other', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const body = '{"specversion":"1.0","id":"8"}';
    const headers = signedHeaders([current, previous], 'msg_wh_x_8', Math.floor(Date.now() / 1000), body);
    assert.equal(headers['webhook-signature']!.split(' ').length, 2);
    assert.deepEqual(new Webhook(current).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(previous).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
  });

  it('signs with the replaced secret only until its overlap ends', () => {
    const secrets = { current: 'whsec_new', previous: { secret: 'whsec_old', until: '2026-01-01T00:00:10.000Z' } };
    assert.deepEqual(secretsSigningAt(secrets, new Date('2026-01-01T00:00:09.999Z')), ['whsec_new', 'whsec_old']);
    assert.deepEqual(secretsSigningAt(secrets, new Date('2026-01-01T00:00:10.000Z')), ['whsec_new']);
    assert.deepEqual(secretsSigningAt({ current: 'whsec_new' }, new Date()), ['whsec_new']);
  });
});

describe('webhook retries', () => {
  const policy = DEFAULT_WEBHOOK_DELIVERY.retry;
  const HOUR = 3_600_000;

  it('retries on the Standard Webhooks example schedule by default, at least 72 hours from the first failure to the last retry', () => {
    assert.deepEqual(policy.scheduleMs, [5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR]);
    const start = new Date('2026-01-01T00:00:00Z');
    let state: { attempts: number; failingSince: string | null } = { attempts: 0, failingSince: null };
    let now = start;
    for (;;) {
      // The shortest waits jitter allows.
      const attempt = afterFailure(policy, state, { error: 'answered 500' }, now, () => 0);
      if (attempt.nextTryAt === undefined) break;
      state = attempt;
      now = new Date(attempt.nextTryAt);
    }
    assert.equal(state.attempts, 9, 'ten attempts: the first and nine retries');
    assert.ok(now.getTime() - start.getTime() >= 72 * HOUR, `the last retry ${(now.getTime() - start.getTime()) / HOUR} h after the first failure`);
  });

  it('waits the scheduled time and up to a tenth more, never less', () => {
    const schedule = { scheduleMs: [1000, 60_000] };
    assert.equal(retryDelayMs(schedule, 1, () => 0), 1000);
    assert.equal(retryDelayMs(schedule, 1, () => 0.999_999), 1100);
    assert.equal(retryDelayMs(schedule, 2, () => 0), 60_000);
    assert.equal(retryDelayMs(schedule, 3, () => 0), undefined, 'the schedule is spent');
  });

  it('gives up once the schedule is spent, keeping when the failures began', () => {
    const schedule = { scheduleMs: [1000] };
    const start = new Date('2026-01-01T00:00:00Z');
    const first = afterFailure(schedule, { attempts: 0, failingSince: null }, { error: 'answered 500' }, start, () => 0);
    assert.deepEqual(first, { attempts: 1, lastError: 'answered 500', failingSince: start.toISOString(), nextTryAt: '2026-01-01T00:00:01.000Z' });
    const last = afterFailure(schedule, first, { error: 'answered 503' }, new Date(start.getTime() + 1000), () => 0);
    assert.deepEqual(last, { attempts: 2, lastError: 'answered 503', failingSince: start.toISOString(), nextTryAt: undefined });
  });

  it('waits at least as long as the receiver asked with Retry-After', () => {
    const start = new Date('2026-01-01T00:00:00Z');
    const later = afterFailure(policy, { attempts: 0, failingSince: null }, { error: 'answered 429', retryAfter: new Date(start.getTime() + 120_000) }, start, () => 0);
    assert.equal(later.nextTryAt, '2026-01-01T00:02:00.000Z');
    const sooner = afterFailure(policy, { attempts: 0, failingSince: null }, { error: 'answered 503', retryAfter: new Date(start.getTime() + 1_000) }, start, () => 0);
    assert.equal(sooner.nextTryAt, '2026-01-01T00:00:05.000Z', 'the schedule when it asks for less');
  });

  it('reads Retry-After as seconds or an HTTP date, bounded to a week', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(retryAfterTime('120', now)?.toISOString(), '2026-01-01T00:02:00.000Z');
    assert.equal(retryAfterTime('Thu, 01 Jan 2026 01:00:00 GMT', now)?.toISOString(), '2026-01-01T01:00:00.000Z');
    assert.equal(retryAfterTime('9999999999', now)?.toISOString(), '2026-01-08T00:00:00.000Z');
    assert.equal(retryAfterTime('soon', now), undefined);
    assert.equal(retryAfterTime(undefined, now), undefined);
  });
});
