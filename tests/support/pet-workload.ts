import { PET_STATUSES } from '../../domain/index.ts';
import type { Pet, PetStatus } from '../../domain/index.ts';
import { checkErrorShape } from './error-shape.ts';
import { afterAnswer, afterLostAnswer, describeStates } from './status-knowledge.ts';
import type { PossibleState, StatusChange } from './status-knowledge.ts';

/**
 * What a client knows about the store after driving it: every create it sent, every pet whose 201 it
 * received, the creates whose answer never came (the server died first: stored or not, either is
 * allowed, but at most once), and for each acknowledged pet the statuses and versions it may be at.
 */
export interface PetLedger {
  /** By name: every name is unique, so a stored row can be traced to the request that made it. */
  readonly sent: Map<string, NewPetSent>;
  /** By id, as the 201 gave it. */
  readonly acknowledged: Map<number, Pet>;
  readonly unanswered: Set<string>;
  /**
   * By id, every acknowledged pet's possible (status, version) now: one while every answer came,
   * more after a status change whose answer was lost.
   */
  readonly states: Map<number, PossibleState[]>;
  /** Every 200 to a status change: at that stream version the pet had that status. */
  readonly acknowledgedChanges: AcknowledgedChange[];
  readonly changeCounts: { illegal: number; stale: number; lost: number };
  /** Acknowledged ids that status changes may pick, and the ones a client is changing right now. */
  readonly changeable: number[];
  readonly changing: Set<number>;
  /** Answers that break a rule: anything but the normal answer, wrong fields, an id given twice. */
  readonly problems: string[];
}

export interface NewPetSent {
  readonly name: string;
  readonly categoryId: number;
  readonly status?: PetStatus;
}

export interface AcknowledgedChange {
  readonly id: number;
  readonly status: PetStatus;
  /** The version its ETag named. */
  readonly version: number;
}

export function createLedger(): PetLedger {
  return {
    sent: new Map(), acknowledged: new Map(), unanswered: new Set(), states: new Map(), acknowledgedChanges: [],
    changeCounts: { illegal: 0, stale: 0, lost: 0 }, changeable: [], changing: new Set(), problems: [],
  };
}

/** An acknowledged pet as it reads with `status`: its creation fields, then the status (absent when none). */
export function petWithStatus(created: Pet, status: PetStatus | undefined): Pet {
  const { id, name, categoryId } = created;
  return status === undefined ? { id, name, categoryId } : { id, name, categoryId, status };
}

export interface OperationContext {
  readonly baseUrl: string;
  readonly key: string;
  /** Unique per request, e.g. c3-w7-n120: makes names unique. */
  readonly label: string;
  readonly random: () => number;
  readonly ledger: PetLedger;
  /** Called after each acknowledged write (a 201, or a 200 to a status change) with the pet as answered, e.g. to read it back through another process. */
  readonly onAcknowledged?: (pet: Pet) => Promise<void>;
  /**
   * A create answered 503 (a storage fault) counts as unanswered (stored or not, at most once) instead
   * of a problem, when its answer is the Error body with a whole-second Retry-After; counted here.
   */
  readonly unavailable?: { count: number };
}

/**
 * One kind of request in the mix. `lost` means the server did not answer (it died or refused the
 * connection); the client then stops.
 */
export interface Operation {
  readonly name: string;
  readonly weight: number;
  run(context: OperationContext): Promise<'answered' | 'lost'>;
}

// Names that exercise the text path end to end; each gets a unique label in front.
const NAME_DIALECTS = ['Rex', 'Tom 🐈', "O'Malley; --", 'שלום', 'Zoë\u0301', '"quoted" \\ slash', '🐕‍🦺'];

export const createPetOperation: Operation = {
  name: 'create',
  weight: 1,
  async run(context) {
    const { random, ledger } = context;
    const name = `${context.label} ${NAME_DIALECTS[Math.floor(random() * NAME_DIALECTS.length)]}`;
    const categoryId = random() < 0.2 ? Number.MAX_SAFE_INTEGER - Math.floor(random() * 1000) : 1 + Math.floor(random() * 50);
    const statusIndex = Math.floor(random() * (PET_STATUSES.length + 1));
    const sent: NewPetSent = statusIndex < PET_STATUSES.length ? { name, categoryId, status: PET_STATUSES[statusIndex]! } : { name, categoryId };
    ledger.sent.set(name, sent);
    let status: number;
    let text: string;
    let location: string | null;
    let contentType: string | null = null;
    let retryAfter: string | null = null;
    try {
      const response = await fetch(`${context.baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${context.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(sent),
      });
      status = response.status;
      location = response.headers.get('location');
      contentType = response.headers.get('content-type');
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      ledger.unanswered.add(name);
      return 'lost';
    }
    if (status === 503 && context.unavailable) {
      context.unavailable.count += 1;
      ledger.unanswered.add(name);
      try {
        checkErrorShape(contentType ?? '', text, status);
        if (!/^\d+$/.test(retryAfter ?? '')) ledger.problems.push(`create ${JSON.stringify(name)} answered 503 with Retry-After ${retryAfter}`);
      } catch (error) {
        ledger.problems.push(`create ${JSON.stringify(name)} answered 503: ${(error as Error).message}`);
      }
      return 'answered';
    }
    if (status !== 201) {
      ledger.problems.push(`create ${JSON.stringify(name)} answered ${status}: ${text}`);
      return 'answered';
    }
    const pet = JSON.parse(text) as Pet;
    if (JSON.stringify(pet) !== JSON.stringify({ id: pet.id, ...sent })) ledger.problems.push(`create ${JSON.stringify(sent)} answered ${text}`);
    if (location !== `${context.baseUrl}/pets/${pet.id}`) ledger.problems.push(`pet ${pet.id} came with Location ${location}`);
    if (ledger.acknowledged.has(pet.id)) ledger.problems.push(`id ${pet.id} was acknowledged twice`);
    ledger.acknowledged.set(pet.id, pet);
    ledger.states.set(pet.id, [{ status: sent.status, version: 1 }]);
    await context.onAcknowledged?.(pet);
    // Only now may status changes pick it: a read-back above must see the pet as created.
    ledger.changeable.push(pet.id);
    return 'answered';
  },
};

// Mostly the moves back and forth, so that pets stay changeable for a while before they are sold.
const TARGET_STATUSES: readonly PetStatus[] = ['available', 'available', 'pending', 'pending', 'sold'];

/** An acknowledged pet no other client is changing, or undefined when a few tries find none. */
function pickIdlePet(ledger: PetLedger, random: () => number): number | undefined {
  for (let tries = 0; tries < 4 && ledger.changeable.length > 0; tries++) {
    const id = ledger.changeable[Math.floor(random() * ledger.changeable.length)]!;
    if (!ledger.changing.has(id)) return id;
  }
  return undefined;
}

/** If-Match: none, a version the client tracked, one it knows is stale, or `*`. */
function chooseIfMatch(states: readonly PossibleState[], random: () => number): number | '*' | undefined {
  const versions = [...new Set(states.map((state) => state.version))];
  const choice = random();
  if (choice < 0.45) return undefined;
  if (choice < 0.85) return versions[Math.floor(random() * versions.length)]!;
  if (choice < 0.95) return Math.min(...versions) > 1 ? Math.min(...versions) - 1 : Math.max(...versions) + 1;
  return '*';
}

/**
 * PATCH /v1/pets/{petId} on an acknowledged pet, with or without If-Match. One client changes a pet
 * at a time (others pick another), so the only uncertainty in what the client knows comes from lost
 * answers; every answer must follow from one of the states the client allows, and narrows them.
 * With no acknowledged pet yet to change, it creates one instead.
 */
export const changeStatusOperation: Operation = {
  name: 'change status',
  weight: 1,
  async run(context) {
    const id = pickIdlePet(context.ledger, context.random);
    if (id === undefined) return createPetOperation.run(context);
    context.ledger.changing.add(id);
    try {
      return await changeStatus(context, id);
    } finally {
      context.ledger.changing.delete(id);
    }
  },
};

async function changeStatus(context: OperationContext, id: number): Promise<'answered' | 'lost'> {
  const { random, ledger } = context;
  const states = ledger.states.get(id)!;
  const change: StatusChange = { to: TARGET_STATUSES[Math.floor(random() * TARGET_STATUSES.length)]!, ifMatch: chooseIfMatch(states, random) };
  const headers: Record<string, string> = {
    authorization: `Bearer ${context.key}`,
    'content-type': random() < 0.5 ? 'application/json' : 'application/merge-patch+json',
  };
  if (change.ifMatch !== undefined) headers['if-match'] = change.ifMatch === '*' ? '*' : `"${change.ifMatch}"`;
  const what = `change of pet ${id} to ${change.to}${change.ifMatch === undefined ? '' : ` (If-Match ${headers['if-match']})`}`;
  let status: number;
  let etag: string | null;
  let contentType: string;
  let text: string;
  try {
    const response = await fetch(`${context.baseUrl}/pets/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ status: change.to }) });
    status = response.status;
    etag = response.headers.get('etag');
    contentType = response.headers.get('content-type') ?? '';
    text = await response.text();
  } catch (error) {
    if (!isConnectionLost(error)) throw error;
    ledger.states.set(id, afterLostAnswer(states, change));
    ledger.changeCounts.lost++;
    return 'lost';
  }

  if (status !== 200 && status !== 409 && status !== 412) {
    ledger.problems.push(`${what} answered ${status}: ${text.slice(0, 200)}`);
    // Nothing is known of what it did: keep every state it could have left.
    ledger.states.set(id, afterLostAnswer(states, change));
    return 'answered';
  }
  const version = status === 200 ? /^"([1-9][0-9]*)"$/.exec(etag ?? '')?.[1] : undefined;
  const next = afterAnswer(states, change, { status, ...(version === undefined ? {} : { version: Number(version) }) });
  if (next.length === 0) ledger.problems.push(`${what} answered ${status}${etag ? ` with ETag ${etag}` : ''}, but the client knew it as ${describeStates(states)}: ${text.slice(0, 200)}`);

  if (status === 200) {
    const pet = petWithStatus(ledger.acknowledged.get(id)!, change.to);
    if (text !== JSON.stringify(pet)) ledger.problems.push(`${what} answered ${text}`);
    if (version === undefined) {
      ledger.problems.push(`${what} answered 200 with ETag ${etag}`);
      ledger.states.set(id, afterLostAnswer(states, change));
      return 'answered';
    }
    ledger.states.set(id, next.length > 0 ? next : [{ status: change.to, version: Number(version) }]);
    ledger.acknowledgedChanges.push({ id, status: change.to, version: Number(version) });
    await context.onAcknowledged?.(pet);
    return 'answered';
  }
  if (next.length > 0) ledger.states.set(id, next);
  if (status === 409) ledger.changeCounts.illegal++;
  else ledger.changeCounts.stale++;
  const expectedCode = status === 409 ? 'illegal_transition' : 'version_mismatch';
  try {
    const { code } = checkErrorShape(contentType, text, status);
    if (code !== expectedCode) ledger.problems.push(`${what} answered ${status} ${code}, not ${expectedCode}`);
  } catch (error) {
    ledger.problems.push(`${what} answered ${status}: ${(error as Error).message}`);
  }
  return 'answered';
}

/** fetch's way of saying the server did not answer: refused or reset ("fetch failed"), or closed mid-body ("terminated"). */
export function isConnectionLost(error: unknown): boolean {
  return error instanceof TypeError && (error.message === 'fetch failed' || error.message === 'terminated');
}

export interface DriveOptions {
  /** Base addresses (…/v1); client i talks to targets[i % targets.length]. */
  readonly targets: readonly string[];
  readonly clients: number;
  readonly key: string;
  readonly operations: readonly Operation[];
  readonly ledger: PetLedger;
  readonly random: () => number;
  /** Prefix for this round's labels, e.g. the cycle number. */
  readonly round: string;
  /** Checked before every request: true ends the drive. */
  readonly stopped: () => boolean;
  readonly onAcknowledged?: (pet: Pet, target: number) => Promise<void>;
  /** See `OperationContext.unavailable`. */
  readonly unavailable?: { count: number };
}

/** Runs `clients` concurrent loops of weighted operations until `stopped()` or the server stops answering them. */
export async function drive(options: DriveOptions): Promise<void> {
  const totalWeight = options.operations.reduce((sum, operation) => sum + operation.weight, 0);
  const pick = () => {
    let point = options.random() * totalWeight;
    for (const operation of options.operations) {
      point -= operation.weight;
      if (point < 0) return operation;
    }
    return options.operations.at(-1)!;
  };
  const client = async (index: number) => {
    const target = index % options.targets.length;
    for (let n = 0; !options.stopped(); n++) {
      const outcome = await pick().run({
        baseUrl: options.targets[target]!,
        key: options.key,
        label: `${options.round}-w${index}-n${n}`,
        random: options.random,
        ledger: options.ledger,
        ...(options.onAcknowledged ? { onAcknowledged: (pet: Pet) => options.onAcknowledged!(pet, target) } : {}),
        ...(options.unavailable ? { unavailable: options.unavailable } : {}),
      });
      if (outcome === 'lost') return;
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)));
}
