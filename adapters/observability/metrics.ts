import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PetStatus } from '../../domain/index.ts';
import type { GroupTotals } from '../../application/index.ts';

/** What the service measures, in one registry of its own (several services can share a process, as tests do). */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** The Prometheus text `/metrics` answers: this process's series, or every worker's (see `everyWorker`). */
  exposition(): Promise<string>;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  countAppended(eventTypes: readonly string[]): void;
}

/**
 * The methods a request is labelled by; any other token is labelled "other". A label takes values
 * from fixed sets only (methods, route templates, statuses), so that no client can add series.
 */
const METHOD_LABELS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

/** A method as a label: itself when it is one of HTTP's usual methods, else "other". */
export function methodLabel(method: string): string {
  return METHOD_LABELS.has(method) ? method : 'other';
}

/** A status as a label: itself when it is a status code, else "other" (a client cannot choose it, but the rule costs nothing). */
export function statusLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : 'other';
}

/** Pets in the read model per status (`null`: pets without a status). */
export type PetCounts = ReadonlyMap<PetStatus | null, number>;

export interface ServiceMetricsOptions {
  readonly petCounts: () => Promise<PetCounts>;
  /** Webhook subscriptions per status (every status named), when the service has them. */
  readonly webhookCounts?: (() => Promise<ReadonlyMap<string, number>>) | undefined;
  /** Every consumer group together, and the log's head, when the service has them. */
  readonly groupTotals?: (() => Promise<{ readonly totals: GroupTotals; readonly head: number }>) | undefined;
  readonly worker?: number | undefined;
  /**
   * A worker's way to every worker's series (asked of the primary), so that one scrape of the shared
   * port sees them all, whichever worker takes the connection.
   */
  readonly everyWorker?: (() => Promise<string>) | undefined;
}

export function createServiceMetrics(options: ServiceMetricsOptions): ServiceMetrics {
  const registry = new Registry();
  if (options.worker !== undefined) {
    // Each worker process measures itself: its series carry its number, so those of two workers never mix.
    registry.setDefaultLabels({ worker: String(options.worker) });
    // prom-client's cluster support: this worker answers the primary's requests with this registry.
    AggregatorRegistry.setRegistries([registry]);
    new AggregatorRegistry();
  }
  collectDefaultMetrics({ register: registry });
  const requestDuration = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const eventsAppended = new Counter({
    name: 'petstore_events_appended_total',
    help: 'Events appended to the log by this process, by type',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'petstore_pets',
    help: 'Pets in the catalogue by status ("none": no status), read from the read model at each scrape',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [status, count] of await options.petCounts()) this.set({ status: status ?? 'none' }, count);
    },
  });
  const { webhookCounts } = options;
  if (webhookCounts) {
    new Gauge({
      name: 'petstore_webhook_subscriptions',
      help: 'Webhook subscriptions by status (active, failing: retries ran out, disabled: the receiver answered 410), read at each scrape',
      labelNames: ['status'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const [status, count] of await webhookCounts()) this.set({ status }, count);
      },
    });
  }
  if (options.groupTotals) {
    const read = options.groupTotals;
    // One read serves the three gauges of a scrape.
    let last: { at: number; totals: ReturnType<typeof read> } | undefined;
    const groupTotals = () => {
      if (!last || performance.now() - last.at > 1000) last = { at: performance.now(), totals: read() };
      return last.totals;
    };
    // Totals over every group, never a series a group: group names are the clients' own, so their number is not the operator's to bound.
    new Gauge({
      name: 'petstore_consumer_groups',
      help: 'Consumer groups, read at each scrape',
      registers: [registry],
      async collect() {
        this.set((await groupTotals()).totals.groups);
      },
    });
    new Gauge({
      name: 'petstore_consumer_group_events',
      help: 'Events of every consumer group by state (in_flight: under a live lease; waiting: to be claimed or retried; parked), read at each scrape',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const { totals } = await groupTotals();
        this.set({ state: 'in_flight' }, totals.inFlight);
        this.set({ state: 'waiting' }, totals.waiting);
        this.set({ state: 'parked' }, totals.parked);
      },
    });
    new Gauge({
      name: 'petstore_consumer_group_max_lag_events',
      help: "The largest lag of any consumer group: the log's head minus the group's checkpoint, read at each scrape",
      registers: [registry],
      async collect() {
        const { totals, head } = await groupTotals();
        this.set(totals.lowestCheckpoint === undefined ? 0 : Math.max(0, head - totals.lowestCheckpoint));
      },
    });
  }
  return {
    registry,
    exposition: options.everyWorker ?? (() => registry.metrics()),
    observeRequest(method, route, status, seconds) {
      requestDuration.observe({ method: methodLabel(method), route, status: statusLabel(status) }, seconds);
    },
    countAppended(eventTypes) {
      for (const type of eventTypes) eventsAppended.inc({ type });
    },
  };
}
