import { IdempotencyKeyReused } from './errors.ts';
import type { PetStorePorts } from './ports.ts';

/** How long an idempotency key is remembered unless the ports say otherwise. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

type RememberingPorts = Pick<PetStorePorts, 'eventStore' | 'idempotencyKeys' | 'clock' | 'idempotencyKeyTtlMs'>;

/** When a record a keyed creation writes now expires. */
export function recordExpiry(ports: RememberingPorts): string {
  return new Date(ports.clock.now().getTime() + (ports.idempotencyKeyTtlMs ?? IDEMPOTENCY_WINDOW_MS)).toISOString();
}

/**
 * The answer a creation remembered under `key`, with the position of its stream's first event (what a read
 * must reach to see it); `IdempotencyKeyReused` when the key came with another request.
 */
export async function rememberedCreation<Answer>(
  ports: RememberingPorts, scope: string, key: string, fingerprint: string, streamOf: (answer: Answer) => string,
): Promise<{ readonly answer: Answer; readonly position: number } | undefined> {
  const record = await ports.idempotencyKeys.find(scope, key, ports.clock.now());
  if (!record) return undefined;
  if (record.fingerprint !== fingerprint) throw new IdempotencyKeyReused(key);
  const answer = record.answer as Answer;
  const stream = await ports.eventStore.readStream(streamOf(answer));
  return { answer, position: stream.events[0]?.position ?? 0 };
}
