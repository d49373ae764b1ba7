import type { HistoryFile } from './history-file.ts';
import { isOutcome, okWithIntegers, refused, send } from './petstore-requests.ts';
import type { Outcome, Target } from './petstore-requests.ts';

/**
 * The store's side of the workload: clients that order the pets others create (most orders are refused:
 * the pet is not available), move the orders they placed (approve, deliver, cancel), and read the
 * inventory at least as new as the highest position they saw. Each is one process of the history.
 */
export interface OrderClientOptions {
  readonly history: HistoryFile;
  readonly targets: readonly Target[];
  readonly random: () => number;
  readonly stopped: () => boolean;
  /** The ids of the pets acknowledged so far (the pet clients' knowledge). */
  readonly petIds: readonly number[];
  readonly record: (history: HistoryFile, process: string, f: string, invoke: Record<string, unknown>, run: () => Promise<Outcome>) => Promise<Outcome>;
}

const json = { 'content-type': 'application/json' };
const MOVES = ['approved', 'delivered', 'cancelled'] as const;

async function placeOrder(target: Target, petId: number): Promise<Outcome> {
  const answer = await send(target, '/store/orders', { method: 'POST', headers: json, body: JSON.stringify({ petId }) });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 201) return refused(answer);
  return okWithIntegers(answer, { id: (answer.body as { id?: unknown }).id, position: Number(answer.headers['petstore-position']) });
}

async function moveOrder(target: Target, id: number, status: (typeof MOVES)[number]): Promise<Outcome> {
  const answer = status === 'cancelled'
    ? await send(target, `/store/orders/${id}`, { method: 'DELETE' })
    : await send(target, `/store/orders/${id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ status }) });
  if (isOutcome(answer)) return answer;
  if (answer.status >= 300) return refused(answer);
  return okWithIntegers(answer, { position: Number(answer.headers['petstore-position']) });
}

async function readInventory(target: Target, minPosition: number): Promise<Outcome> {
  const answer = await send(target, '/store/inventory', { headers: minPosition > 0 ? { 'petstore-min-position': String(minPosition) } : {} });
  if (isOutcome(answer)) return answer;
  if (answer.status !== 200) return refused(answer);
  const { available, pending, sold } = answer.body as Record<string, unknown>;
  return okWithIntegers(answer, { available, pending, sold });
}

export async function orderClient(options: OrderClientOptions, process: string): Promise<void> {
  const { history, random, record } = options;
  const placed: number[] = [];
  let highest = 0;
  const seen = (outcome: Outcome) => {
    const position = outcome.value.position;
    if (outcome.type === 'ok' && typeof position === 'number' && position > highest) highest = position;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  while (!options.stopped()) {
    const target = pick(options.targets);
    const choice = random();
    let outcome: Outcome;
    if ((choice < 0.4 || placed.length === 0) && options.petIds.length > 0) {
      const petId = pick(options.petIds);
      outcome = await record(history, process, 'order', { petId }, () => placeOrder(target, petId));
      if (outcome.type === 'ok') placed.push(outcome.value.id as number);
    } else if (choice < 0.75 && placed.length > 0) {
      const move = { id: pick(placed), status: pick(MOVES) };
      outcome = await record(history, process, 'move-order', move, () => moveOrder(target, move.id, move.status));
    } else {
      outcome = await record(history, process, 'inventory', { minPosition: highest }, () => readInventory(target, highest));
    }
    seen(outcome);
    if (outcome.type === 'info') await new Promise((resolve) => setTimeout(resolve, 50 + random() * 100));
  }
}
