import type { PetEvent } from '../../../domain/index.ts';
import type { Clock, WebhookSubscription, WebhookSubscriptions } from '../../../application/index.ts';
import { cloudEventTypeOf, eventTypeNamed } from '../../../contract/event-feed.ts';
import { NewWebhookCheckedSchema, WebhookReplaySchema } from '../../../contract/webhooks.ts';
import { keyIdOf } from '../pipeline/request-state.ts';
import { parseWebhookUrl, resolveSafeTarget, serviceRefusal, UnsafeWebhookTarget } from '../../webhooks/safe-target.ts';
import type { TargetPolicy } from '../../webhooks/safe-target.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { bodyShape, readBody } from '../parsing/checked-body.ts';
import { jsonBodyOf, requireJsonBody } from '../parsing/json-body.ts';
import { parseAttemptQuery } from '../parsing/attempt-query.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import type { Route, RouteContext } from '../pipeline/request-state.ts';

/** What the webhook routes manage, and whom they tell of a subscription to deliver now. */
export interface WebhookResource {
  readonly subscriptions: WebhookSubscriptions;
  readonly targets: TargetPolicy;
  /** Subscriptions one key may have. */
  readonly maxPerKey: number;
  readonly clock: Clock;
  /** A subscription was created or resumed: deliver it without waiting for the next scan. */
  readonly changed: () => void;
  /** A subscription was replayed: whoever delivers it here starts over from the new position. */
  readonly replayed: (id: string) => void;
  /** A subscription's secret was rotated: its next request here is signed with the new secrets. */
  readonly rotated: (id: string) => void;
  /** How long a replaced secret keeps signing beside the new one. */
  readonly secretOverlapMs: number;
}

export interface WebhookRoutesOptions {
  readonly webhooks: WebhookResource;
  readonly publicBaseUrl: () => string;
}

/** A subscription as its owner sees it: never the secret, filters in the feed's names. */
export function webhookView(subscription: WebhookSubscription) {
  return {
    id: subscription.id,
    url: subscription.url,
    ...(subscription.types ? { types: subscription.types.map(cloudEventTypeOf) } : {}),
    ...(subscription.petId !== undefined ? { petId: subscription.petId } : {}),
    batchSize: subscription.batchSize,
    ...(subscription.maxPerSecond !== undefined ? { maxPerSecond: subscription.maxPerSecond } : {}),
    createdAt: subscription.createdAt,
    status: subscription.status,
  };
}

/**
 * Experimental: webhook subscriptions, each owned by the API key that made it (another key is told 404).
 * `POST /v1/webhooks` answers the signing secret, once.
 */
// Checked once each, by the one body check every route uses (`parsing/checked-body.ts`).
const NEW_WEBHOOK = bodyShape(NewWebhookCheckedSchema, 'a NewWebhook');
const WEBHOOK_REPLAY = bodyShape(WebhookReplaySchema, 'a WebhookReplay');

export function createWebhookRoutes({ webhooks, publicBaseUrl }: WebhookRoutesOptions): readonly Route[] {
  const { subscriptions } = webhooks;
  const router = declareRoutes({ keyed: true });

  /** The caller's subscription named by the path, or 404 (also for another key's). */
  async function owned(ctx: RouteContext): Promise<WebhookSubscription> {
    const id = ctx.params.id!;
    const subscription = await subscriptions.get(id);
    if (!subscription || subscription.ownerKeyId !== keyIdOf(ctx)) throw new HttpProblem('not_found', `no webhook ${id}`);
    return subscription;
  }

  router.post('createWebhook', '/v1/webhooks', requireJsonBody(['application/json']), async (ctx) => {
    const { url, types, petId, batchSize, maxPerSecond } = readBody(jsonBodyOf(ctx), NEW_WEBHOOK);
    try {
      await resolveSafeTarget(parseWebhookUrl(url), webhooks.targets);
    } catch (error) {
      if (error instanceof UnsafeWebhookTarget) throw new HttpProblem('invalid_body', serviceRefusal(error));
      throw error;
    }
    const eventTypes = types?.map((name) => eventTypeNamed(name)!) as PetEvent['type'][] | undefined;
    const { subscription, secret } = await subscriptions.create(
      { ownerKeyId: keyIdOf(ctx), url, ...(eventTypes ? { types: eventTypes } : {}), ...(petId !== undefined ? { petId } : {}), ...(batchSize !== undefined ? { batchSize } : {}), ...(maxPerSecond !== undefined ? { maxPerSecond } : {}) },
      webhooks.clock.now(),
      webhooks.maxPerKey,
    );
    webhooks.changed();
    ctx.status = 201;
    ctx.set('Location', `${publicBaseUrl()}/webhooks/${subscription.id}`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...webhookView(subscription), secret };
  });

  router.get('listWebhooks', '/v1/webhooks', async (ctx) => {
    ctx.body = (await subscriptions.list(keyIdOf(ctx))).map(webhookView);
  });

  router.get('getWebhook', '/v1/webhooks/:id', async (ctx) => {
    ctx.body = webhookView(await owned(ctx));
  });

  router.delete('deleteWebhook', '/v1/webhooks/:id', async (ctx) => {
    const subscription = await owned(ctx);
    await subscriptions.delete(subscription.id);
    ctx.status = 204;
  });

  router.post('resumeWebhook', '/v1/webhooks/:id/resume', async (ctx) => {
    const subscription = await owned(ctx);
    await subscriptions.resume(subscription.id);
    webhooks.changed();
    ctx.body = webhookView({ ...subscription, status: 'active' });
  });

  router.get('listWebhookAttempts', '/v1/webhooks/:id/attempts', async (ctx) => {
    const { limit, before } = parseAttemptQuery(ctx.querystring);
    const subscription = await owned(ctx);
    // One more than asked says whether a next page exists.
    const attempts = await subscriptions.attempts(subscription.id, { limit: limit + 1, ...(before === undefined ? {} : { before }) }, webhooks.clock.now());
    const page = attempts.slice(0, limit);
    if (attempts.length > limit) ctx.set('Link', `<${publicBaseUrl()}/webhooks/${subscription.id}/attempts?limit=${limit}&before=${page.at(-1)!.id}>; rel="next"`);
    ctx.body = page;
  });

  router.post('replayWebhook', '/v1/webhooks/:id/replay', requireJsonBody(['application/json']), async (ctx) => {
    const { after } = readBody(jsonBodyOf(ctx), WEBHOOK_REPLAY);
    const subscription = await owned(ctx);
    const outcome = await subscriptions.replay(subscription.id, after);
    if (outcome === 'no_subscription') throw new HttpProblem('not_found', `no webhook ${subscription.id}`);
    if (outcome === 'past_log_end') throw new HttpProblem('invalid_body', `after ${after} is past the end of the log: nothing was committed there yet`);
    webhooks.replayed(subscription.id);
    ctx.status = 202;
    ctx.body = webhookView({ ...subscription, status: 'active' });
  });

  router.post('rotateWebhookSecret', '/v1/webhooks/:id/rotate-secret', async (ctx) => {
    const subscription = await owned(ctx);
    const now = webhooks.clock.now();
    const secret = await subscriptions.rotateSecret(subscription.id, now, webhooks.secretOverlapMs);
    if (secret === undefined) throw new HttpProblem('not_found', `no webhook ${subscription.id}`);
    webhooks.rotated(subscription.id);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { secret, previousSecretExpiresAt: new Date(now.getTime() + webhooks.secretOverlapMs).toISOString() };
  });

  router.get('listWebhookDeliveries', '/v1/webhooks/:id/deliveries', async (ctx) => {
    const { status, position, attempts, lastError, nextTryAt, failingSince, lastDeliveredAt } = await owned(ctx);
    ctx.body = { status, position, attempts, lastError, nextTryAt, failingSince, lastDeliveredAt };
  });

  return router.routes;
}
