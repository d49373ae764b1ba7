import type { Aggregate, DomainEvent, EventShape } from './aggregate.ts';
import type { RowChange } from './commits.ts';

/**
 * The aggregates the store knows, by event type and by stream prefix: filled from the one list
 * (`aggregates.ts`), and by a service built with more. Every event in one log belongs to one of them.
 */
const registered: Aggregate<any, any>[] = [];
const byType = new Map<string, { readonly aggregate: Aggregate<any, any>; readonly shape: EventShape }>();
const byPrefix = new Map<string, Aggregate<any, any>>();

/** Adds an aggregate; again with the same one does nothing. Throws when its prefix or an event type is another's. */
export function registerAggregate(aggregate: Aggregate<any, any>): void {
  if (registered.includes(aggregate)) return;
  const prefix = aggregate.streamPrefix;
  if (!/^[a-z][a-z0-9]*-$/.test(prefix)) throw new Error(`stream prefix ${JSON.stringify(prefix)} is not lower-case letters and digits ending in '-'`);
  if (byPrefix.has(prefix)) throw new Error(`stream prefix ${prefix} is taken by ${byPrefix.get(prefix)!.name}`);
  const shapes = Object.entries(aggregate.events as Record<string, EventShape>);
  for (const [type] of shapes) if (byType.has(type)) throw new Error(`event type ${type} is taken by ${byType.get(type)!.aggregate.name}`);
  registered.push(aggregate);
  byPrefix.set(prefix, aggregate);
  for (const [type, shape] of shapes) byType.set(type, { aggregate, shape });
}

export function registeredAggregates(): readonly Aggregate<any, any>[] {
  return registered;
}

/** The aggregate whose stream `streamId` is, and the id it names; undefined for a stream of no registered aggregate. */
export function aggregateOfStream(streamId: string): { readonly aggregate: Aggregate<any, any>; readonly id: number } | undefined {
  const dash = streamId.lastIndexOf('-');
  const aggregate = byPrefix.get(streamId.slice(0, dash + 1));
  return aggregate && { aggregate, id: Number(streamId.slice(dash + 1)) };
}

/** The registered shape of an event type, and its aggregate. */
export function eventTypeOf(type: string): { readonly aggregate: Aggregate<any, any>; readonly shape: EventShape } | undefined {
  return byType.get(type);
}

/** Every registered event type. */
export function registeredEventTypes(): string[] {
  return [...byType.keys()];
}

/** The event type a CloudEvents `type` names, if any. */
export function eventTypeNamed(cloudEventType: string): string | undefined {
  for (const [type, { shape }] of byType) if (shape.cloudEventType === cloudEventType) return type;
  return undefined;
}

/** The state `events` lead to from the aggregate's start. */
export function foldEvents<State>(aggregate: Aggregate<State, any>, events: readonly DomainEvent[], from: State = aggregate.initialState()): State {
  return events.reduce(aggregate.evolve, from);
}

/**
 * The read-model row an event changed and the statuses it left and entered, told from the event alone
 * (for a commit another instance made); undefined when that cannot be told.
 */
export function rowChangeOf({ streamId, event }: { readonly streamId: string; readonly event: DomainEvent }): RowChange | undefined {
  const found = aggregateOfStream(streamId);
  const model = found?.aggregate.readModel;
  if (!model?.statusesOf) return undefined;
  return { table: model.table, id: found!.id, statuses: model.statusesOf(event) };
}
