import type { Commit, Commits } from '../commits.ts';
import { claimEvents } from './consumer-groups.ts';
import type { ClaimAnswer, ClaimOutcome, ConsumerGroupPorts } from './consumer-groups.ts';

/** How a claim waits, and the leases of its consumer's last batch it acks first (one request a batch for a busy worker). */
export interface ClaimWait {
  readonly waitMs: number;
  readonly signal?: AbortSignal;
  readonly acks?: readonly string[];
}

/** Claims that wait for events, kept per group (see `createClaimWaits`). */
export interface ClaimWaits {
  /**
   * `claimEvents`, and while nothing can be handed out, again when something may have become due, until
   * `waitMs` have passed (counted on the monotonic clock: a wall clock stepped back or forward changes no
   * wait) or `signal` aborts; then it answers what it has: nothing.
   */
  claim(ownerKeyId: string, name: string, consumer: string, max: number, wait: ClaimWait): Promise<ClaimAnswer | undefined>;
  /** Something in the group may have become due here (a nack, a release, a replay): its waiting claims look at once. */
  changed(ownerKeyId: string, name: string): void;
}

interface Waiter {
  readonly consumer: string;
  readonly max: number;
  readonly answer: (outcome: ClaimOutcome | undefined) => void;
}

interface WaitingGroup {
  readonly ownerKeyId: string;
  readonly name: string;
  /** The types the group takes (absent: every type): a commit of none of them is not its concern. */
  readonly types: readonly string[] | undefined;
  readonly waiters: Waiter[];
  looking: boolean;
  again: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** A commit of its concern was heard since the group last read the log: the log may hold more for it. */
  logMoved: boolean;
}

/** Whether `commit` may have appended events of a type `group` takes. */
function concerns(commit: Commit, group: WaitingGroup): boolean {
  return group.types === undefined || commit.types === undefined || commit.types.some((type) => group.types!.includes(type));
}

/**
 * Waiting claims, a queue per group: on a commit of a type the group takes, a change made here, or every
 * `recheckMs` (retries falling due, leases expiring, other instances' changes), the group is looked at once
 * for its first waiter, then for the next while events keep coming. A look with no such commit heard since
 * the group last read the log is one read (`due`), and one that finds nothing due writes nothing, so an
 * idle group costs one read a recheck however many claims wait on it, and another tenant's commits of
 * other types cost it nothing. A commit that appended nothing (a group's own write) counts for nobody.
 */
export function createClaimWaits(ports: ConsumerGroupPorts & { readonly commits: Pick<Commits, 'onCommitted'> }, options: { readonly recheckMs: number }): ClaimWaits {
  const groups = new Map<string, WaitingGroup>();
  let unsubscribe: (() => void) | undefined;
  /** Claims under way (first looks included): commits are heard while there are any. */
  let active = 0;
  let commitsHeard = 0;
  const keyOf = (ownerKeyId: string, name: string) => `${ownerKeyId}\u0000${name}`;

  function look(group: WaitingGroup): void {
    if (group.looking) {
      group.again = true;
      return;
    }
    group.looking = true;
    void (async () => {
      try {
        while (group.waiters.length > 0) {
          const waiter = group.waiters[0]!;
          let outcome: ClaimOutcome | undefined;
          try {
            if (!group.logMoved && !(await ports.consumerGroups.group(group.ownerKeyId, group.name).pending(ports.clock.now()))?.due) break;
            group.logMoved = false;
            outcome = await claimEvents(ports, group.ownerKeyId, group.name, waiter.consumer, waiter.max, false);
          } catch {
            // A store fault: the next look tries again; the waiter's own deadline still holds.
            break;
          }
          if (outcome && 'claims' in outcome && outcome.claims.length === 0) break;
          // Taken out (if still there) and answered: the next waiter may find more.
          leave(group, waiter, outcome);
        }
      } finally {
        group.looking = false;
        if (group.again) {
          group.again = false;
          look(group);
        } else {
          arm(group);
        }
      }
    })();
  }

  function arm(group: WaitingGroup): void {
    if (group.timer !== undefined || group.waiters.length === 0) return;
    group.timer = setTimeout(() => {
      group.timer = undefined;
      look(group);
    }, options.recheckMs);
  }

  function leave(group: WaitingGroup, waiter: Waiter, outcome: ClaimOutcome | undefined): void {
    const at = group.waiters.indexOf(waiter);
    if (at < 0) {
      // It stopped waiting while a look leased events for it: nobody will handle them, so they go back at once.
      if (outcome && 'claims' in outcome && outcome.claims.length > 0) {
        const leases = outcome.claims.map((claim) => claim.lease);
        void ports.consumerGroups.group(group.ownerKeyId, group.name).nack(leases, ports.clock.now(), { release: true }).then(() => look(group), () => undefined);
      }
      return;
    }
    group.waiters.splice(at, 1);
    if (group.waiters.length === 0) {
      clearTimeout(group.timer);
      group.timer = undefined;
      groups.delete(keyOf(group.ownerKeyId, group.name));
    }
    waiter.answer(outcome);
  }

  function begin(): void {
    active += 1;
    unsubscribe ??= ports.commits.onCommitted((commit) => {
      // A commit that changed no pet appended no event (a group's own ack, nack or claim): nothing new to hand out.
      if (commit.changes?.length === 0 && commit.types?.length === 0) return;
      commitsHeard += 1;
      for (const group of groups.values()) {
        if (!concerns(commit, group)) continue;
        group.logMoved = true;
        look(group);
      }
    });
  }

  function end(): void {
    active -= 1;
    if (active > 0) return;
    unsubscribe?.();
    unsubscribe = undefined;
  }

  return {
    async claim(ownerKeyId, name, consumer, max, wait) {
      const deadline = performance.now() + wait.waitMs;
      begin();
      try {
        const heardBefore = commitsHeard;
        // The acks are committed with the first look's claim, in its transaction; later looks carry none.
        const first = await claimEvents(ports, ownerKeyId, name, consumer, max, true, wait.acks);
        if (!first || !('claims' in first) || first.claims.length > 0 || wait.waitMs <= 0 || wait.signal?.aborted) return first;
        const acked = first.acked;
        const withAcks = (outcome: ClaimOutcome | undefined): ClaimAnswer | undefined => (outcome && acked ? { ...outcome, acked } : outcome);
        const key = keyOf(ownerKeyId, name);
        const types = groups.has(key) ? undefined : (await ports.consumerGroups.group(ownerKeyId, name).get())?.types;
        const left = deadline - performance.now();
        if (left <= 0) return withAcks(first);
        return withAcks(await new Promise<ClaimOutcome | undefined>((resolve) => {
          let group = groups.get(key);
          if (!group) {
            group = { ownerKeyId, name, types, waiters: [], looking: false, again: false, timer: undefined, logMoved: false };
            groups.set(key, group);
          }
          // A commit heard during its first look may hold events for it: the group reads the log at its next look.
          if (commitsHeard !== heardBefore) group.logMoved = true;
          const waiting = group;
          const stop = () => leave(waiting, waiter, { claims: [] });
          const timer = setTimeout(stop, left);
          const waiter: Waiter = {
            consumer, max,
            answer(outcome) {
              clearTimeout(timer);
              wait.signal?.removeEventListener('abort', stop);
              resolve(outcome);
            },
          };
          wait.signal?.addEventListener('abort', stop, { once: true });
          waiting.waiters.push(waiter);
          if (waiting.logMoved) look(waiting);
          else arm(waiting);
        }));
      } finally {
        end();
      }
    },
    changed(ownerKeyId, name) {
      const group = groups.get(keyOf(ownerKeyId, name));
      if (group) look(group);
    },
  };
}

/** One waiting claim on `ports` (see `ClaimWaits.claim`): for callers that keep no `ClaimWaits` of their own. */
export function claimEventsWaiting(
  ports: ConsumerGroupPorts & { readonly commits: Pick<Commits, 'onCommitted'> },
  ownerKeyId: string, name: string, consumer: string, max: number,
  wait: { readonly waitMs: number; readonly recheckMs: number; readonly signal?: AbortSignal },
): Promise<ClaimOutcome | undefined> {
  return createClaimWaits(ports, { recheckMs: wait.recheckMs }).claim(ownerKeyId, name, consumer, max, wait);
}
