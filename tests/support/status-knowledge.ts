import type { PetStatus } from '../../domain/index.ts';

/**
 * What a client can know about one pet's status: every (status, stream version) it may be at now.
 * One state while every answer came; more after a change whose answer was lost (applied or not).
 * `status` is undefined for a pet that has none.
 */
export interface PossibleState {
  readonly status: PetStatus | undefined;
  readonly version: number;
}

/** The status rules as docs/decisions.md states them, written out here so the test does not grade the product by its own table. */
const ALLOWED: Readonly<Record<PetStatus | 'none', readonly PetStatus[]>> = {
  none: ['available', 'pending', 'sold'],
  available: ['pending', 'sold'],
  pending: ['available', 'sold'],
  sold: [],
};

/** A status change as sent: the target status and If-Match (a version, `*`, or none). */
export interface StatusChange {
  readonly to: PetStatus;
  readonly ifMatch: number | '*' | undefined;
}

export interface ChangeOutcome {
  readonly status: 200 | 409 | 412;
  readonly after: PossibleState;
}

/** What the service must answer to `change` when the pet is at `state`, and where the pet then is. */
export function expectedOutcome(state: PossibleState, change: StatusChange): ChangeOutcome {
  if (typeof change.ifMatch === 'number' && change.ifMatch !== state.version) return { status: 412, after: state };
  if (state.status === change.to) return { status: 200, after: state };
  if (ALLOWED[state.status ?? 'none'].includes(change.to)) return { status: 200, after: { status: change.to, version: state.version + 1 } };
  return { status: 409, after: state };
}

function distinct(states: readonly PossibleState[]): PossibleState[] {
  const seen = new Map<string, PossibleState>();
  for (const state of states) seen.set(`${state.status}@${state.version}`, state);
  return [...seen.values()];
}

/**
 * The states left after an answer: those from which `change` gives this answer (for a 200, with this
 * ETag version), moved on by it. Empty when no state the client allowed explains the answer.
 */
export function afterAnswer(states: readonly PossibleState[], change: StatusChange, answer: { status: number; version?: number }): PossibleState[] {
  const outcomes = states.map((state) => expectedOutcome(state, change));
  return distinct(outcomes
    .filter((outcome) => outcome.status === answer.status && (answer.status !== 200 || outcome.after.version === answer.version))
    .map((outcome) => outcome.after));
}

/** After a change whose answer was lost: each state stays possible, and so does where the change would have taken it. */
export function afterLostAnswer(states: readonly PossibleState[], change: StatusChange): PossibleState[] {
  return distinct([...states, ...states.map((state) => expectedOutcome(state, change).after)]);
}

export function describeStates(states: readonly PossibleState[]): string {
  return states.map((state) => `${state.status ?? 'no status'}@${state.version}`).join(' or ');
}
