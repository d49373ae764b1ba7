import Router from '@koa/router';
import type { Context } from 'koa';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { nameProblem } from '../../../domain/index.ts';
import type { PetEvent } from '../../../domain/index.ts';
import { ackEvents, createClaimWaits, createGroup, extendLeases, nackEvents, GROUP_LIMITS, replayParked } from '../../../application/index.ts';
import type { Commits, ConsumerGroup, ConsumerGroupPorts, GroupStatus, NackRequest, NewGroup, ParkedEvent, StoredEvent } from '../../../application/index.ts';
import { cloudEventTypeOf, eventTypeNamed } from '../../../contract/event-feed.ts';
import {
  ClaimRequestCheck, ClaimRequestSchema, CONSUMER_MAX_CODE_POINTS, GROUP_NAME_PATTERN, LEASE_MAX_CODE_POINTS, LeasesCheck, LeasesSchema, NackCheck, NackSchema, NewConsumerGroupCheck, NewConsumerGroupSchema,
  ReplayParkedCheck, ReplayParkedSchema,
} from '../../../contract/consumer-groups.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../../application/index.ts';
import { cloudEventJson } from '../../../contract/cloud-events.ts';
import { HttpProblem } from '../pipeline/errors.ts';
import { exactInteger, topLevelNumberText } from '../parsing/exact-json-integer.ts';
import { jsonBodyOf, readJsonObject, requireJsonBody } from '../parsing/json-body.ts';
import { plainInteger, readQuery, single } from '../parsing/list-query.ts';
import { keyIdOf } from '../pipeline/request-state.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import { invalidKey } from '../guards/require-api-key.ts';
import { clientAddressKey } from '../guards/client-address.ts';
import type { WaitingClaims } from './waiting-claims.ts';

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

const NAME = new RegExp(GROUP_NAME_PATTERN);

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
 * A body checked against its schema, integers as written (JSON.parse would read 1.0000000000000001 as 1),
 * and the names a client gives (`names`: a field, or a field of strings, and its most code points) by the
 * rule a pet's name follows.
 */
function checkedBody<T>(
  ctx: Context, schema: TSchema & { properties: Record<string, TSchema>; $id?: string }, check: TypeCheck<TSchema>, required: readonly string[] = [],
  names: Readonly<Record<string, number>> = {},
): T {
  const { body, raw } = readJsonObject(jsonBodyOf(ctx), `a ${schema.$id}`, Object.keys(schema.properties));
  for (const field of required) if (!Object.hasOwn(body, field)) throw new HttpProblem('invalid_body', `${field} is required`);
  if (!check.Check(body)) {
    const first = check.Errors(body).First()!;
    throw new HttpProblem('invalid_body', `${first.path.slice(1) || 'body'}: ${first.message}`);
  }
  for (const [field, value] of Object.entries(body)) {
    if (typeof value !== 'number') continue;
    const text = topLevelNumberText(raw, field);
    if (text === undefined || exactInteger(text) !== BigInt(value)) throw new HttpProblem('invalid_body', `${field} must be a whole number, got ${text ?? value}`);
  }
  for (const [field, maxCodePoints] of Object.entries(names)) {
    const value = body[field];
    const texts = typeof value === 'string' ? [[field, value]] : Array.isArray(value) ? value.map((text, index) => [`${field}/${index}`, String(text)]) : [];
    for (const [name, text] of texts) {
      const problem = nameProblem(name!, text!, maxCodePoints);
      if (problem !== undefined) throw new HttpProblem('invalid_body', problem);
    }
  }
  return body as T;
}

/**
 * Experimental: consumer groups, each owned by the API key that made it (another key is told 404). Consumers
 * claim events under leases, ack or nack them; see docs/consumer-groups.md.
 */
export function createConsumerGroupRouter({ consumerGroups: resource, publicBaseUrl }: ConsumerGroupRoutesOptions): Router {
  const groups = resource.consumerGroups;
  const router = new Router({ strict: true, sensitive: true });
  const owner = keyIdOf;
  const now = () => resource.clock.now();
  /**
   * A JSON body whose `event` fields are the feed's CloudEvent text as is, written once: each entry's other
   * fields as JSON, the event's text spliced in after them.
   */
  const withEvents = <T extends { readonly event: StoredEvent }>(entries: readonly T[], fields: (entry: T) => Record<string, unknown>): string => {
    const source = publicBaseUrl();
    return `[${entries.map((entry) => `${JSON.stringify(fields(entry)).slice(0, -1)},"event":${cloudEventJson(entry.event, source)}}`).join(',')}]`;
  };
  const head = async () => await resource.eventLog.end();
  const claimWaits = createClaimWaits(resource, { recheckMs: resource.recheckMs ?? 1000 });

  const nameOf = (ctx: Context): string => {
    const name = ctx.params.group!;
    if (!NAME.test(name)) throw new HttpProblem('invalid_path', `a group name is 1 to 64 of a-z, 0-9 and -, got ${JSON.stringify(name)}`);
    return name;
  };
  /** The caller's group named by the path, or 404 (also for another key's). */
  async function owned(ctx: Context): Promise<ConsumerGroup> {
    const name = nameOf(ctx);
    const group = await groups.get(owner(ctx), name);
    if (!group) throw new HttpProblem('not_found', `no consumer group ${name}`);
    return group;
  }
  const view = async (ctx: Context, name: string) => {
    const status = await groups.status(owner(ctx), name, now());
    if (!status) throw new HttpProblem('not_found', `no consumer group ${name}`);
    return groupView(status, await head());
  };

  router.put('putConsumerGroup', '/v1/consumer-groups/:group', requireJsonBody(['application/json']), async (ctx) => {
    const name = nameOf(ctx);
    const { types, ...body } = checkedBody<Omit<NewGroup, 'types'> & { types?: string[] }>(ctx, NewConsumerGroupSchema, NewConsumerGroupCheck);
    const request: NewGroup = { ...body, ...(types ? { types: types.map((type) => eventTypeNamed(type)!) as PetEvent['type'][] } : {}) };
    const created = await createGroup(resource, owner(ctx), name, request, resource.maxPerKey);
    if (created.outcome === 'conflict') throw new HttpProblem('group_exists', `consumer group ${name} exists with other settings; delete it first to change them`);
    ctx.status = created.outcome === 'created' ? 201 : 200;
    ctx.body = await view(ctx, name);
  });

  router.get('listConsumerGroups', '/v1/consumer-groups', async (ctx) => {
    const logHead = await head();
    const statuses = await Promise.all((await groups.list(owner(ctx))).map((group) => groups.status(owner(ctx), group.name, now())));
    ctx.body = statuses.filter((status) => status !== undefined).map((status) => groupView(status, logHead));
  });

  router.get('getConsumerGroup', '/v1/consumer-groups/:group', async (ctx) => {
    ctx.body = await view(ctx, nameOf(ctx));
  });

  router.delete('deleteConsumerGroup', '/v1/consumer-groups/:group', async (ctx) => {
    const group = await owned(ctx);
    if (!(await groups.delete(owner(ctx), group.name))) throw new HttpProblem('not_found', `no consumer group ${group.name}`);
    ctx.status = 204;
  });

  router.post('claimConsumerGroupEvents', '/v1/consumer-groups/:group/claims', requireJsonBody(['application/json']), async (ctx) => {
    const name = nameOf(ctx);
    const body = checkedBody<{ consumer: string; max?: number; waitMs?: number; acks?: string[] }>(
      ctx, ClaimRequestSchema, ClaimRequestCheck, ['consumer'], { consumer: CONSUMER_MAX_CODE_POINTS, acks: LEASE_MAX_CODE_POINTS },
    );
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
      const claims = withEvents(outcome.claims, (claim) => ({ lease: claim.lease, position: claim.position, deliveries: claim.deliveries, leaseExpiresAt: claim.leaseExpiresAt }));
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
    const { leases } = checkedBody<{ leases: string[] }>(ctx, LeasesSchema, LeasesCheck, ['leases'], { leases: LEASE_MAX_CODE_POINTS });
    const outcome = await ackEvents(resource, owner(ctx), nameOf(ctx), leases);
    ctx.body = { acked: outcome.done.length, stale: outcome.stale };
  });

  router.post('nackConsumerGroupEvents', '/v1/consumer-groups/:group/nacks', requireJsonBody(['application/json']), async (ctx) => {
    const { leases, ...request } = checkedBody<NackRequest & { leases: string[] }>(ctx, NackSchema, NackCheck, ['leases'], { leases: LEASE_MAX_CODE_POINTS });
    const name = nameOf(ctx);
    const outcome = await nackEvents(resource, owner(ctx), name, leases, request);
    if (outcome.done.length > 0) claimWaits.changed(owner(ctx), name);
    ctx.body = { nacked: outcome.done.length, stale: outcome.stale };
  });

  router.post('extendConsumerGroupLeases', '/v1/consumer-groups/:group/extend', requireJsonBody(['application/json']), async (ctx) => {
    const { leases } = checkedBody<{ leases: string[] }>(ctx, LeasesSchema, LeasesCheck, ['leases'], { leases: LEASE_MAX_CODE_POINTS });
    const outcome = await extendLeases(resource, owner(ctx), nameOf(ctx), leases);
    ctx.body = { leases: outcome.done, stale: outcome.stale };
  });

  router.get('listParkedEvents', '/v1/consumer-groups/:group/parked', async (ctx) => {
    const params = readQuery(ctx.querystring);
    const limit = plainInteger('limit', single(params, 'limit')) ?? DEFAULT_LIMIT;
    if (limit < 1 || limit > MAX_LIMIT) throw new HttpProblem('invalid_query', `limit must be an integer from 1 to ${MAX_LIMIT}, got ${limit}`);
    const after = plainInteger('after', single(params, 'after')) ?? 0;
    const group = await owned(ctx);
    // One more than asked says whether a next page exists.
    const parked = await groups.parked(owner(ctx), group.name, after, limit + 1, now());
    const page = parked.slice(0, limit);
    if (parked.length > limit) ctx.set('Link', `<${publicBaseUrl()}/consumer-groups/${group.name}/parked?limit=${limit}&after=${page.at(-1)!.position}>; rel="next"`);
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = Buffer.from(withEvents(page, (entry: ParkedEvent) => ({ position: entry.position, reason: entry.reason, deliveries: entry.deliveries, parkedAt: entry.parkedAt })));
  });

  router.post('replayParkedEvents', '/v1/consumer-groups/:group/parked/replay', requireJsonBody(['application/json']), async (ctx) => {
    const { positions } = checkedBody<{ positions?: number[] }>(ctx, ReplayParkedSchema, ReplayParkedCheck);
    const group = await owned(ctx);
    const replayed = await replayParked(resource, owner(ctx), group.name, positions);
    if (replayed > 0) claimWaits.changed(owner(ctx), group.name);
    ctx.status = 202;
    ctx.body = { replayed };
  });

  return router;
}
