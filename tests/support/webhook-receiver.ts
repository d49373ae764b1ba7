import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** What the receiver does with a request it was sent. */
export type ReceiverFault = 'none' | 'status-500' | 'status-503' | 'timeout' | 'close';

export interface ReceivedEvent {
  readonly webhookId: string;
  /** The CloudEvent's id: the position in the log. */
  readonly position: number;
  readonly type: string;
  readonly event: Record<string, any>;
  /** The body as sent. */
  readonly body: string;
  /** The request's Standard Webhooks headers, to verify again with another secret. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface WebhookReceiver {
  /** e.g. http://127.0.0.1:40123/hook */
  readonly url: string;
  /** Every request that passed the signature check and was acknowledged, in arrival order (duplicates included). */
  readonly acknowledged: ReceivedEvent[];
  /** The events in each acknowledged request, in arrival order. */
  readonly batches: number[];
  /** Requests whose signature did not verify (should stay empty). */
  readonly badSignatures: string[];
  /** Requests that were refused or dropped on purpose. */
  faulted: number;
  /** The signing secret, once the subscription is created. */
  secret: string | undefined;
  /** Decides the fault of each request (default: none). */
  faultFor: (request: number) => ReceiverFault;
  /** Resolves once `acknowledged` holds an event with this position or later. */
  waitFor(predicate: (received: readonly ReceivedEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Stops listening (connections refused) until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A webhook receiver on loopback that verifies every signature with the `standardwebhooks` package (as a
 * client would) and can fail on purpose: 5xx, no answer, or a connection closed without one.
 */
export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  let requests = 0;
  let listeningPort = port;
  const waiters = new Set<() => void>();
  const receiver: WebhookReceiver = {
    url: '',
    acknowledged: [],
    batches: [],
    badSignatures: [],
    faulted: 0,
    secret: undefined,
    faultFor: () => 'none',
    waitFor(predicate, timeoutMs = 60_000) {
      if (predicate(receiver.acknowledged)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the receiver did not get what was awaited within ${timeoutMs} ms; it has ${receiver.acknowledged.length} events`));
        }, timeoutMs);
        const check = () => {
          if (!predicate(receiver.acknowledged)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => closing.close(resolve));
    },
    async start() {
      if (server) return;
      server = createServer(handle);
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => server!.listen(listeningPort, '127.0.0.1', resolve));
      listeningPort = (server.address() as AddressInfo).port;
    },
    close: () => receiver.stop(),
  };

  function handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const fault = receiver.faultFor(++requests);
      if (fault !== 'none') {
        receiver.faulted++;
        if (fault === 'close') request.socket.destroy();
        else if (fault === 'timeout') setTimeout(() => request.socket.destroy(), 60_000).unref();
        else response.writeHead(fault === 'status-500' ? 500 : 503, { 'content-type': 'text/plain' }).end('try later');
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(request.headers[name] ?? '')]));
      let verified: Record<string, any> | Record<string, any>[];
      try {
        verified = new Webhook(receiver.secret ?? 'whsec_').verify(body, headers) as Record<string, any>;
      } catch (error) {
        receiver.badSignatures.push(`${headers['webhook-id']}: ${(error as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      // A batch (an array) is one request: each of its events with the request's id and body.
      const events: Record<string, any>[] = Array.isArray(verified) ? verified : [verified];
      const batch = Array.isArray(verified);
      if (batch !== String(request.headers['content-type']).startsWith('application/cloudevents-batch+json')) receiver.badSignatures.push(`${headers['webhook-id']}: wrong content type`);
      receiver.batches.push(events.length);
      for (const event of events) {
        receiver.acknowledged.push({ webhookId: headers['webhook-id']!, position: Number(event.id), type: event.type, event, body, headers });
      }
      response.writeHead(204).end();
      for (const waiter of [...waiters]) waiter();
    });
  }

  await receiver.start();
  Object.assign(receiver, { url: `http://127.0.0.1:${listeningPort}/hook` });
  return receiver;
}

/** The positions of the distinct events received, in the order first received; and any event that came again with another webhook-id or body. */
export function distinctDeliveries(received: readonly ReceivedEvent[]): { positions: number[]; idMismatches: string[] } {
  const idOf = new Map<number, string>();
  const bodyOf = new Map<number, string>();
  const positions: number[] = [];
  const idMismatches: string[] = [];
  for (const { position, webhookId, body } of received) {
    const known = idOf.get(position);
    if (known === undefined) {
      idOf.set(position, webhookId);
      bodyOf.set(position, body);
      positions.push(position);
    } else if (known !== webhookId || bodyOf.get(position) !== body) idMismatches.push(`${position}: ${known} then ${webhookId}, or another body`);
  }
  return { positions, idMismatches };
}
