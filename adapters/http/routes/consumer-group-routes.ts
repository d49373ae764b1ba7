import type { PetEvent } from '../../../domain/index.ts';
import { ackEvents, checkedPage, createClaimWaits, createGroup, extendLeases, nackEvents, GROUP_LIMITS, replayParked } from '../../../application/index.ts';
import type { Claim, Commits, ConsumerGroup, ConsumerGroupPorts, GroupStatus, NewGroup, ParkedEvent, StoredEvent } from '../../../application/index.ts';
import { cloudEventTypeOf, eventTypeNamed } from '../../../contract/event-feed.ts';
import { ClaimRequestSchema, LeasesSchema, NackSchema, NewConsumerGroupSchema, ReplayParkedSchema } from '../../../contract/consumer-groups.ts';
import { cloudEventJson } from '../../../contract/cloud-events.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { bodyShape, readBody } from '../parsing/checked-body.ts';
import { parseGroupName } from '../parsing/group-name.ts';
import { jsonBodyOf, requireJsonBody } from '../parsing/json-body.ts';
import { nextPageLink, parsePageQuery } from '../parsing/list-query.ts';
import { keyIdOf } from '../pipeline/request-state.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import { invalidKey } from '../guards/require-api-key.ts';
import { clientAddressKey } from '../guards/client-address.ts';
import type { WaitingClaims } from './waiting-claims.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import type { Route, RouteContext } from '../pipeline/request-state.ts';

/** What the consumer group routes work with. */
export interface ConsumerGroupResource extends ConsumerGroupPorts {
  readonly commits: Pick<Commits, 'onCommitted'>;
  /** Groups one key may have. */
  readonly maxPerKey: number;
  /** How often a waiting claim looks again without a commit (retries falling due, other instances' acks). */
  readonly recheckMs?: number;
  /** The claims waiting for events: bounded, ended by a revocation or the service's stop. */
  readonly waitingClaims: WaitingClaims;
}

export interface ConsumerGroupRoutesOptions {
  readonly consumerGroups: ConsumerGroupResource;
  readonly publicBaseUrl: () => string;
}

// Checked once each, by the one body check every route uses (`parsing/checked-body.ts`).
const NEW_GROUP = bodyShape(NewConsumerGroupSchema, 'a NewConsumerGroup');
const CLAIM_REQUEST = bodyShape(ClaimRequestSchema, 'a ClaimRequest');
const LEASES = bodyShape(LeasesSchema, 'a Leases');
const NACK = bodyShape(NackSchema, 'a Nack');
const REPLAY_PARKED = bodyShape(ReplayParkedSchema, 'a ReplayParked');

/** A group as its owner reads it, settings in the feed's names. */
export function groupView(status: GroupStatus, head: number) {
  const { group } = status;
  const at = Math.max(head, status.checkpoint);
  return {
    group: group.name,
    checkpoint: status.checkpoint,
    head: at,
    lag: at - status.checkpoint,
    inFlight: status.inFlight,
    parked: status.parked,
    consumers: status.consumers,
    ackTimeoutMs: group.ackTimeoutMs,
    maxDeliveries: group.maxDeliveries,
    start: group.start,
    ...(group.types ? { types: group.types.map(cloudEventTypeOf) } : {}),
    createdAt: group.createdAt,
  };
}

/**
 * Experimental: consumer groups, each owned by the API key that made it (another key is told 404). Consumers
 * claim events under leases, ack or nack them; see docs/consumer-groups.md.
 */
export function createConsumerGroupRoutes({ consumerGroups: resource, publicBaseUrl }: ConsumerGroupRoutesOptions): readonly Route[] {
  const groups = resource.consumerGroups;
  const router = declareRoutes({ keyed: true });
  const owner = keyIdOf;
  const now = () => resource.clock.now();
  /**
   * A JSON body whose `event` fields are the feed's CloudEvent text as is, written once: each entry's other
   * fields as the JSON text of an object left open (`fieldsOpen`), the event's text spliced in after them.
   */
  const withEvents = <T extends { readonly event: StoredEvent }>(entries: readonly T[], fieldsOpen: (entry: T) => string): string => {
    const source = publicBaseUrl();
    let text = '[';
    for (const entry of entries) text += `${text.length > 1 ? ',' : ''}${fieldsOpen(entry)},"event":${cloudEventJson(entry.event, source)}}`;
    return `${text}]`;
  };
  const openObject = (fields: Record<string, unknown>) => JSON.stringify(fields).slice(0, -1);
  /**
   * A claim's fields, as `openObject` writes them key for key, from a template: a claim answers hundreds, and
   * its lease (a base64url token and a position) and expiry (ISO time) hold nothing JSON escapes.
   */
  const claimOpen = (claim: Claim) =>
    `{"lease":"${claim.lease}","position":${claim.position},"deliveries":${claim.deliveries},"leaseExpiresAt":"${claim.leaseExpiresAt}"`;
  const head = async () => await resource.eventLog.end();
  const claimWaits = createClaimWaits(resource, { recheckMs: resource.recheckMs ?? 1000 });

  const nameOf = (ctx: RouteContext): string => parseGroupName(ctx.params.group!);
  /** The caller's group named by the path, or 404 (also for another key's). */
  async function owned(ctx: RouteContext): Promise<ConsumerGroup> {
    const name = nameOf(ctx);
    const group = await groups.group(owner(ctx), name).get();
    if (!group) throw new HttpProblem('not_found', `no consumer group ${name}`);
    return group;
  }
  const view = async (ctx: RouteContext, name: string) => {
    const status = await groups.group(owner(ctx), name).status(now());
    if (!status) throw new HttpProblem('not_found', `no consumer group ${name}`);
    return groupView(status, await head());
  };

  router.put('putConsumerGroup', '/v1/consumer-groups/:group', requireJsonBody(['application/json']), async (ctx) => {
    const name = nameOf(ctx);
    const { types, ...body } = readBody(jsonBodyOf(ctx), NEW_GROUP);
    const request: NewGroup = { ...body, ...(types ? { types: types.map((type) => eventTypeNamed(type)!) as PetEvent['type'][] } : {}) };
    const created = await createGroup(resource, owner(ctx), name, request, resource.maxPerKey);
    if (created.outcome === 'conflict') throw new HttpProblem('group_exists', `consumer group ${name} exists with other settings; delete it first to change them`);
    ctx.status = created.outcome === 'created' ? 201 : 200;
    ctx.body = await view(ctx, name);
  });

  router.get('listConsumerGroups', '/v1/consumer-groups', async (ctx) => {
    const logHead = await head();
    const statuses = await Promise.all((await groups.list(owner(ctx))).map((group) => groups.group(owner(ctx), group.name).status(now())));
    ctx.body = statuses.filter((status) => status !== undefined).map((status) => groupView(status, logHead));
  });

  router.get('getConsumerGroup', '/v1/consumer-groups/:group', async (ctx) => {
    ctx.body = await view(ctx, nameOf(ctx));
  });

  router.delete('deleteConsumerGroup', '/v1/consumer-groups/:group', async (ctx) => {
    const name = nameOf(ctx);
    if (!(await groups.group(owner(ctx), name).delete())) throw new HttpProblem('not_found', `no consumer group ${name}`);
    ctx.status = 204;
  });

  router.post('claimConsumerGroupEvents', '/v1/consumer-groups/:group/claims', requireJsonBody(['application/json']), async (ctx) => {
    const name = nameOf(ctx);
    const body = readBody(jsonBodyOf(ctx), CLAIM_REQUEST);
    const waitMs = body.waitMs ?? 0;
    const waiting = waitMs > 0 ? resource.waitingClaims.admit(clientAddressKey(ctx.req.socket.remoteAddress ?? ''), owner(ctx)) : undefined;
    // The request has been read whole by now (its own 'close' has fired on Node 20): the response and the
    // socket say when the client leaves. A client that closes its side has left too.
    let clientLeft = false;
    const stop = new AbortController();
    const leave = () => {
      clientLeft = true;
      stop.abort();
    };
    const end = () => stop.abort();
    const socket = ctx.req.socket;
    ctx.res.once('close', leave);
    socket.once('end', leave);
    if (socket.readableEnded || socket.destroyed) leave();
    waiting?.signal.addEventListener('abort', end, { once: true });
    try {
      const outcome = await claimWaits.claim(owner(ctx), name, body.consumer, body.max ?? 10, { waitMs, signal: stop.signal, ...(body.acks ? { acks: body.acks } : {}) });
      if (!outcome) throw new HttpProblem('not_found', `no consumer group ${name}`);
      if ('full' in outcome) {
        if (outcome.full === 'consumers') {
          throw new HttpProblem('rate_limited', `the group has seen ${GROUP_LIMITS.consumersPerGroup} consumers lately, the most it shows: claim under one of their names`, {
            'Retry-After': String(Math.ceil(outcome.retryAfterMs / 1000)),
          });
        }
        const cap = outcome.full === 'group' ? `the group's ${GROUP_LIMITS.inFlightPerGroup}` : `this consumer's ${GROUP_LIMITS.inFlightPerConsumer}`;
        throw new HttpProblem('too_many_in_flight', `${cap} events are in flight: ack, nack or let leases expire first`, {
          'Retry-After': String(Math.ceil(outcome.retryAfterMs / 1000)),
        });
      }
      if (outcome.claims.length > 0 && (clientLeft || waiting?.revoked)) {
        // Leased as the client left or its key was revoked: nobody will handle them, another consumer takes them at once.
        await nackEvents(resource, owner(ctx), name, outcome.claims.map((claim) => claim.lease), { release: true });
        claimWaits.changed(owner(ctx), name);
      }
      if (waiting?.revoked) throw invalidKey();
      if (clientLeft) return;
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Type', JSON_TYPE);
      const claims = withEvents(outcome.claims, claimOpen);
      const acked = outcome.acked ? `,"acked":${outcome.acked.done.length},"stale":${JSON.stringify(outcome.acked.stale)}` : '';
      ctx.body = Buffer.from(`{"claims":${claims}${acked}}`);
    } finally {
      waiting?.done();
      ctx.res.off('close', leave);
      socket.off('end', leave);
      waiting?.signal.removeEventListener('abort', end);
    }
  });

  router.post('ackConsumerGroupEvents', '/v1/consumer-groups/:group/acks', requireJsonBody(['application/json']), async (ctx) => {
    const { leases } = readBody(jsonBodyOf(ctx), LEASES);
    const outcome = await ackEvents(resource, owner(ctx), nameOf(ctx), leases);
    ctx.body = { acked: outcome.done.length, stale: outcome.stale };
  });

  router.post('nackConsumerGroupEvents', '/v1/consumer-groups/:group/nacks', requireJsonBody(['application/json']), async (ctx) => {
    const { leases, ...request } = readBody(jsonBodyOf(ctx), NACK);
    const name = nameOf(ctx);
    const outcome = await nackEvents(resource, owner(ctx), name, leases, request);
    if (outcome.done.length > 0) claimWaits.changed(owner(ctx), name);
    ctx.body = { nacked: outcome.done.length, stale: outcome.stale };
  });

  router.post('extendConsumerGroupLeases', '/v1/consumer-groups/:group/extend', requireJsonBody(['application/json']), async (ctx) => {
    const { leases } = readBody(jsonBodyOf(ctx), LEASES);
    const outcome = await extendLeases(resource, owner(ctx), nameOf(ctx), leases);
    ctx.body = { leases: outcome.done, stale: outcome.stale };
  });

  router.get('listParkedEvents', '/v1/consumer-groups/:group/parked', async (ctx) => {
    const { limit, after = 0 } = checkedPage(parsePageQuery(ctx.querystring), 'parked event position');
    const group = await owned(ctx);
    // One more than asked says whether a next page exists.
    const parked = await groups.group(owner(ctx), group.name).parked(after, limit + 1, now());
    const page = parked.slice(0, limit);
    if (parked.length > limit) ctx.set('Link', nextPageLink(publicBaseUrl(), `/consumer-groups/${group.name}/parked`, {}, limit, page.at(-1)!.position));
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = Buffer.from(withEvents(page, (entry: ParkedEvent) => openObject({ position: entry.position, reason: entry.reason, deliveries: entry.deliveries, parkedAt: entry.parkedAt })));
  });

  router.post('replayParkedEvents', '/v1/consumer-groups/:group/parked/replay', requireJsonBody(['application/json']), async (ctx) => {
    const { positions } = readBody(jsonBodyOf(ctx), REPLAY_PARKED);
    const group = await owned(ctx);
    const replayed = await replayParked(resource, owner(ctx), group.name, positions);
    if (replayed > 0) claimWaits.changed(owner(ctx), group.name);
    ctx.status = 202;
    ctx.body = { replayed };
  });

  return router.routes;
}
