/** An event as the store keeps it: a past-tense `type` and plain JSON `data`. */
export interface DomainEvent {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** Lifts a stored event's data one schema version up. */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/** How one event type is stored and published. */
export interface EventShape {
  /** The shape version written today (kept in each event's metadata). */
  readonly schemaVersion: number;
  /** How to lift each older stored shape one version up, keyed by the version it lifts from. */
  readonly upcasters?: Readonly<Record<number, Upcaster>>;
  /** Its CloudEvents `type`: a stable name consumers filter on (a new shape they would notice gets a new name). */
  readonly cloudEventType: string;
}

/** A read-model row as the store writes it: column → value. */
export type ReadModelRow = Record<string, string | number | null>;

/**
 * The rows an aggregate's projection writes, in the append's transaction: one row a stream, keyed by
 * the stream's id (`id`), in the table `table` that the store declares. `changeOf` says which
 * statuses a row left and entered, for caches that follow a status (undefined: none follows it).
 */
export interface ReadModel<State> {
  readonly table: string;
  /**
   * The row of `state` at `version`: a new one (created at `at`) when `existing` is undefined. The row
   * keeps `version` in its column `version`: the store reads a stream's version from its row.
   */
  rowOf(existing: ReadModelRow | undefined, state: State, version: number, at: string): ReadModelRow;
  /** The state a row holds: what the rebuild folds the next event onto. */
  stateOf(row: ReadModelRow): State;
  /** The statuses an event of this aggregate left and entered (from the event alone, for other instances' commits). */
  statusesOf?(event: DomainEvent): readonly (string | null)[];
}

/**
 * An aggregate, in Emmett's `Decider` style: its state's start and fold, its events and their stored
 * shapes, where its streams live, and the read model its projection writes. The store, the feed and
 * the rebuild know aggregates only through this (registered in `aggregates.ts`).
 */
export interface Aggregate<State = unknown, Event extends DomainEvent = DomainEvent> {
  /** Its name: also the name of the sequence its ids are drawn from (`<name>_id`). */
  readonly name: string;
  /** Each stream is `<streamPrefix><id>`, id a positive integer. */
  readonly streamPrefix: string;
  /** The CloudEvents subject collection: an event of stream `<prefix><id>` has subject `<subject>/<id>`. */
  readonly subject: string;
  readonly initialState: () => State;
  readonly evolve: (state: State, event: Event) => State;
  readonly events: { readonly [T in Event['type']]: EventShape };
  readonly readModel?: ReadModel<State>;
}

/** One stream an aggregate writes to: `<prefix><id>`. */
export function streamOf(aggregate: Pick<Aggregate<never, never>, 'streamPrefix'>, id: number): string {
  return `${aggregate.streamPrefix}${id}`;
}
