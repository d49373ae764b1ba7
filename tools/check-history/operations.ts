import { indexOf, outcomeOf, UnusableRecord } from './history.ts';
import type { HistoryRecord, Operation } from './history.ts';

/**
 * Typed views of each operation's values, as the history format defines them; a value of the wrong
 * shape is an `UnusableRecord`, which the model reports and sets aside (see `OPERATION_VIEWS`).
 */

function field<T>(record: HistoryRecord, name: string, is: (value: unknown) => value is T, optional: boolean): T | undefined {
  const value = record.value[name];
  if (value === undefined && optional) return undefined;
  if (!is(value)) throw new UnusableRecord(record, value === undefined ? `${name} is missing` : `${name} is ${JSON.stringify(value)?.slice(0, 80)}`);
  return value;
}
const isString = (value: unknown): value is string => typeof value === 'string';
export const isInteger = (value: unknown): value is number => Number.isSafeInteger(value);
const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
const isPetOrNull = (value: unknown): value is Pet | null => value === null || (typeof value === 'object' && isInteger((value as Pet).id));

export const need = <T>(record: HistoryRecord, name: string, is: (value: unknown) => value is T) => field(record, name, is, false) as T;
export const maybe = <T>(record: HistoryRecord, name: string, is: (value: unknown) => value is T) => field(record, name, is, true);

export interface Pet {
  readonly id: number;
  readonly name?: string;
  readonly categoryId?: number;
  readonly status?: string;
}

export interface Viewed {
  readonly op: Operation;
  /** The index that names it in a finding. */
  readonly index: number;
  readonly outcome: 'ok' | 'fail' | 'info';
  readonly invokedAt: number;
  /** When it completed; Infinity when it never did. */
  readonly completedAt: number;
}

export function viewed(op: Operation): Viewed {
  return { op, index: indexOf(op), outcome: outcomeOf(op), invokedAt: op.invoke.time, completedAt: op.completion?.time ?? Infinity };
}
export const okValue = (op: Operation) => (outcomeOf(op) === 'ok' ? op.completion! : undefined);

export interface CreateOp extends Viewed {
  readonly name: string;
  readonly categoryId: number;
  readonly status: string | undefined;
  readonly key: string | undefined;
  readonly ok?: { readonly id: number; readonly position: number };
}

export function createOp(op: Operation): CreateOp {
  const { invoke } = op;
  const ok = okValue(op);
  return {
    ...viewed(op),
    name: need(invoke, 'name', isString),
    categoryId: need(invoke, 'categoryId', isInteger),
    status: maybe(invoke, 'status', isString),
    key: maybe(invoke, 'key', isString),
    ...(ok ? { ok: { id: need(ok, 'id', isInteger), position: need(ok, 'position', isInteger) } } : {}),
  };
}

export interface SetStatusOp extends Viewed {
  readonly id: number;
  readonly status: string;
  readonly ifMatch: number | undefined;
  readonly ok?: { readonly version: number; readonly position: number };
}

export function setStatusOp(op: Operation): SetStatusOp {
  const { invoke } = op;
  const ok = okValue(op);
  return {
    ...viewed(op),
    id: need(invoke, 'id', isInteger),
    status: need(invoke, 'status', isString),
    ifMatch: maybe(invoke, 'ifMatch', isInteger),
    ...(ok ? { ok: { version: need(ok, 'version', isInteger), position: need(ok, 'position', isInteger) } } : {}),
  };
}

export interface ReadOp extends Viewed {
  readonly id: number;
  readonly minPosition: number | undefined;
  readonly ok?: { readonly pet: Pet | null; readonly version: number | undefined };
}

export function readOp(op: Operation): ReadOp {
  const { invoke } = op;
  const ok = okValue(op);
  return {
    ...viewed(op),
    id: need(invoke, 'id', isInteger),
    minPosition: maybe(invoke, 'minPosition', isInteger),
    ...(ok ? { ok: { pet: need(ok, 'pet', isPetOrNull), version: maybe(ok, 'version', isInteger) } } : {}),
  };
}

export interface ListOp extends Viewed {
  readonly status: string | undefined;
  readonly limit: number;
  readonly after: number | undefined;
  readonly minPosition: number | undefined;
  readonly ok?: { readonly pets: readonly Pet[] };
}

export function listOp(op: Operation): ListOp {
  const { invoke } = op;
  const ok = okValue(op);
  return {
    ...viewed(op),
    status: maybe(invoke, 'status', isString),
    limit: need(invoke, 'limit', isInteger),
    after: maybe(invoke, 'after', isInteger),
    minPosition: maybe(invoke, 'minPosition', isInteger),
    ...(ok ? { ok: { pets: need(ok, 'pets', isArray) as Pet[] } } : {}),
  };
}

export interface FeedOp extends Viewed {
  readonly after: number;
  /** What the consumer received: on `ok`, and on `info` when the record says (a stream that broke after some events). */
  readonly events: readonly unknown[];
}

export function feedOp(op: Operation): FeedOp {
  const completion = op.completion;
  const received = completion && completion.type !== 'fail' ? maybe(completion, 'events', isArray) : undefined;
  return { ...viewed(op), after: need(op.invoke, 'after', isInteger), events: received ?? [] };
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isIntegerArray = (value: unknown): value is number[] => Array.isArray(value) && value.every(isInteger);
const isStart = (value: unknown): value is 'beginning' | 'end' | number => value === 'beginning' || value === 'end' || isInteger(value);
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';

export interface GroupCreateOp extends Viewed {
  readonly group: string;
  readonly ackTimeoutMs: number;
  readonly start: 'beginning' | 'end' | number;
  /** The CloudEvents types it takes; undefined: all. */
  readonly types: readonly string[] | undefined;
  readonly ok?: { readonly checkpoint: number; readonly head: number };
}

export function groupCreateOp(op: Operation): GroupCreateOp {
  const { invoke } = op;
  const ok = okValue(op);
  return {
    ...viewed(op),
    group: need(invoke, 'group', isString),
    ackTimeoutMs: need(invoke, 'ackTimeoutMs', isInteger),
    start: need(invoke, 'start', isStart),
    types: maybe(invoke, 'types', isStringArray),
    ...(ok ? { ok: { checkpoint: need(ok, 'checkpoint', isInteger), head: need(ok, 'head', isInteger) } } : {}),
  };
}

export interface Claim {
  readonly lease: string;
  readonly position: number;
  readonly deliveries: number;
  readonly event: Readonly<Record<string, unknown>>;
}
const isClaims = (value: unknown): value is Claim[] => Array.isArray(value) && value.every((claim) =>
  typeof claim === 'object' && claim !== null && isString(claim.lease) && isInteger(claim.position) && isInteger(claim.deliveries) && typeof claim.event === 'object' && claim.event !== null);

export interface ClaimOp extends Viewed {
  readonly group: string;
  readonly consumer: string;
  readonly ok?: { readonly claims: readonly Claim[] };
}

export function claimOp(op: Operation): ClaimOp {
  const ok = okValue(op);
  return {
    ...viewed(op),
    group: need(op.invoke, 'group', isString),
    consumer: need(op.invoke, 'consumer', isString),
    ...(ok ? { ok: { claims: need(ok, 'claims', isClaims) } } : {}),
  };
}

export interface AckOp extends Viewed {
  readonly group: string;
  readonly leases: readonly string[];
  readonly ok?: { readonly acked: number; readonly stale: readonly string[] };
}

export function ackOp(op: Operation): AckOp {
  const ok = okValue(op);
  return {
    ...viewed(op),
    group: need(op.invoke, 'group', isString),
    leases: need(op.invoke, 'leases', isStringArray),
    ...(ok ? { ok: { acked: need(ok, 'acked', isInteger), stale: need(ok, 'stale', isStringArray) } } : {}),
  };
}

/** A nack of leases: with `park`, their events are parked (until a replay hands them out again). */
export interface NackOp extends Viewed {
  readonly group: string;
  readonly leases: readonly string[];
  readonly park: boolean;
  readonly ok?: { readonly nacked: number; readonly stale: readonly string[] };
}

export function nackOp(op: Operation): NackOp {
  const ok = okValue(op);
  return {
    ...viewed(op),
    group: need(op.invoke, 'group', isString),
    leases: need(op.invoke, 'leases', isStringArray),
    park: maybe(op.invoke, 'park', isBoolean) ?? false,
    ...(ok ? { ok: { nacked: need(ok, 'nacked', isInteger), stale: need(ok, 'stale', isStringArray) } } : {}),
  };
}

/** A replay of a group's parked events: each is handed out again, and the checkpoint may move back below it. */
export interface ReplayOp extends Viewed {
  readonly group: string;
  readonly ok?: { readonly replayed: number };
}

export function replayOp(op: Operation): ReplayOp {
  const ok = okValue(op);
  return { ...viewed(op), group: need(op.invoke, 'group', isString), ...(ok ? { ok: { replayed: need(ok, 'replayed', isInteger) } } : {}) };
}

export interface GroupReadOp extends Viewed {
  readonly group: string;
  /** The recorder's drain saw a claim hand out nothing while no lease it knew of could be live. */
  readonly drained: boolean;
  readonly ok?: { readonly checkpoint: number; readonly head: number; readonly parked: readonly number[] | undefined };
}

export function groupReadOp(op: Operation): GroupReadOp {
  const ok = okValue(op);
  return {
    ...viewed(op),
    group: need(op.invoke, 'group', isString),
    drained: maybe(op.invoke, 'drained', isBoolean) ?? false,
    ...(ok ? { ok: { checkpoint: need(ok, 'checkpoint', isInteger), head: need(ok, 'head', isInteger), parked: maybe(ok, 'parked', isIntegerArray) } } : {}),
  };
}

/**
 * Every operation a history may hold, by its `f`, with the view that reads it: a record its view cannot
 * read is reported, never silently dropped. Adding an operation is adding it here.
 */
export const OPERATION_VIEWS: Readonly<Record<string, (op: Operation) => unknown>> = Object.freeze({
  create: createOp,
  'set-status': setStatusOp,
  read: readOp,
  list: listOp,
  feed: feedOp,
  // The final read of the whole log: read by the model itself (`readPetLog`), which refuses a log it cannot read.
  log: (op: Operation) => op,
  'group-create': groupCreateOp,
  claim: claimOp,
  ack: ackOp,
  nack: nackOp,
  replay: replayOp,
  group: groupReadOp,
});
