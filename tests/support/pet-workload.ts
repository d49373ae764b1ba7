import { PET_STATUSES } from '../../domain/index.ts';
import type { Pet, PetStatus } from '../../domain/index.ts';

/**
 * What a client knows about the store after driving it: every create it sent, every pet whose 201 it
 * received, and the creates whose answer never came (the server died first: stored or not, either is
 * allowed, but at most once).
 */
export interface PetLedger {
  /** By name: every name is unique, so a stored row can be traced to the request that made it. */
  readonly sent: Map<string, NewPetSent>;
  /** By id, as the 201 gave it. */
  readonly acknowledged: Map<number, Pet>;
  readonly unanswered: Set<string>;
  /** Answers that break a rule: anything but the normal answer, wrong fields, an id given twice. */
  readonly problems: string[];
}

export interface NewPetSent {
  readonly name: string;
  readonly categoryId: number;
  readonly status?: PetStatus;
}

export function createLedger(): PetLedger {
  return { sent: new Map(), acknowledged: new Map(), unanswered: new Set(), problems: [] };
}

export interface OperationContext {
  readonly baseUrl: string;
  readonly key: string;
  /** Unique per request, e.g. c3-w7-n120: makes names unique. */
  readonly label: string;
  readonly random: () => number;
  readonly ledger: PetLedger;
  /** Called after each acknowledged create, e.g. to read it back through another process. */
  readonly onAcknowledged?: (pet: Pet) => Promise<void>;
}

/**
 * One kind of request in the mix. `lost` means the server did not answer (it died or refused the
 * connection); the client then stops. Status changes (PATCH /v1/pets/{petId}) join as a second
 * operation once the service has them: it picks an acknowledged pet, records the acknowledged new
 * status (and, for an unanswered change, both the old and the new status as possible), and the
 * final check then compares each pet with what its last acknowledged change said.
 */
export interface Operation {
  readonly name: string;
  readonly weight: number;
  run(context: OperationContext): Promise<'answered' | 'lost'>;
}

// Names that exercise the text path end to end; each gets a unique label in front.
const NAME_FLAVOURS = ['Rex', 'Tom 🐈', "O'Malley; --", 'שלום', 'Zoë\u0301', '"quoted" \\ slash', '🐕‍🦺'];

export const createPetOperation: Operation = {
  name: 'create',
  weight: 1,
  async run(context) {
    const { random, ledger } = context;
    const name = `${context.label} ${NAME_FLAVOURS[Math.floor(random() * NAME_FLAVOURS.length)]}`;
    const categoryId = random() < 0.2 ? Number.MAX_SAFE_INTEGER - Math.floor(random() * 1000) : 1 + Math.floor(random() * 50);
    const statusIndex = Math.floor(random() * (PET_STATUSES.length + 1));
    const sent: NewPetSent = statusIndex < PET_STATUSES.length ? { name, categoryId, status: PET_STATUSES[statusIndex]! } : { name, categoryId };
    ledger.sent.set(name, sent);
    let status: number;
    let text: string;
    let location: string | null;
    try {
      const response = await fetch(`${context.baseUrl}/pets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${context.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(sent),
      });
      status = response.status;
      location = response.headers.get('location');
      text = await response.text();
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      ledger.unanswered.add(name);
      return 'lost';
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
    await context.onAcknowledged?.(pet);
    return 'answered';
  },
};

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
      });
      if (outcome === 'lost') return;
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)));
}
