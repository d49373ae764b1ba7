import { checkedLogQuery, PetNotFound, readEvents, readPetHistory } from '../../../application/index.ts';
import type { Commits, EventLog } from '../../../application/index.ts';
import { clientAddressKey } from '../guards/client-address.ts';
import { cloudEventsJson } from '../../../contract/cloud-events.ts';
import { nextEventQuery, parseEventQuery, parseLastEventId } from '../parsing/event-query.ts';
import type { EventStreams } from './event-stream.ts';
import { JSON_TYPE } from '../pipeline/media-types.ts';
import { parsePetId } from '../parsing/pet-id.ts';
import { keyIdOf } from '../pipeline/request-state.ts';
import { declareRoutes } from '../pipeline/route-table.ts';
import type { Route, RouteContext } from '../pipeline/request-state.ts';

/** What the event routes read: the log, its commits, and the open streams. */
export interface EventFeed {
  readonly eventLog: EventLog;
  readonly commits: Pick<Commits, 'onCommitted'>;
  readonly streams: EventStreams;
}

export interface EventRoutesOptions {
  readonly feed: EventFeed;
  /** The deployment's public base address including /v1: each event's `source`, and the base of `Link`. */
  readonly publicBaseUrl: () => string;
}

/**
 * Experimental: the log as CloudEvents. `GET /v1/events` answers a JSON page, or a Server-Sent Events
 * stream when the client accepts `text/event-stream`; `GET /v1/pets/{petId}/events` one pet's history.
 */
export function createEventRoutes({ feed, publicBaseUrl }: EventRoutesOptions): readonly Route[] {
  const router = declareRoutes({ keyed: true });

  router.get('listEvents', '/v1/events', async (ctx) => {
    const query = parseEventQuery(ctx.querystring);
    // Checked on every answer, so a malformed header is refused the same way wherever it is sent; a JSON
    // page pages by `after` alone, as its Link does, so a client that always sends the header never loops.
    const lastEventId = parseLastEventId(ctx.headers['last-event-id']);
    if (wantsStream(ctx)) {
      // Checked as for a page; the page size means nothing to a stream.
      const { after, types, streamId } = checkedLogQuery(lastEventId === undefined ? query : { ...query, after: lastEventId });
      const serve = feed.streams.admit(clientAddressKey(ctx.req.socket.remoteAddress ?? ''), keyIdOf(ctx));
      ctx.respond = false;
      ctx.status = 200;
      await serve(ctx.res, { after, ...(types ? { types } : {}), ...(streamId ? { streamId } : {}) }, publicBaseUrl());
      return;
    }
    const { events, nextAfter } = await readEvents(feed, query);
    if (nextAfter !== undefined) ctx.set('Link', `<${publicBaseUrl()}/events?${nextEventQuery(query, nextAfter)}>; rel="next"`);
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = Buffer.from(cloudEventsJson(events, publicBaseUrl()));
  });

  router.get('listPetEvents', '/v1/pets/:petId/events', async (ctx) => {
    const text = ctx.params.petId!;
    const id = parsePetId(text);
    if (id === undefined) throw new PetNotFound(text);
    const events = await readPetHistory(feed, id);
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = Buffer.from(cloudEventsJson(events, publicBaseUrl()));
  });

  return router.routes;
}

/** The stream is chosen by `Accept: text/event-stream` on a GET; JSON is the default for anything else (HEAD included: no body to stream). */
function wantsStream(ctx: RouteContext): boolean {
  return ctx.method === 'GET' && ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream';
}
