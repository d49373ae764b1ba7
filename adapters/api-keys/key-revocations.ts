import type { Logger } from 'pino';
import type { ApiKeyTable } from './key-verifier.ts';
import { KEY_TABLE_REFRESH_MS } from './key-verifier.ts';

/**
 * The one place a running service learns that a key was revoked, here or by another process (the CLI,
 * another instance): what a key holds open (its event streams, the delivery loops of its webhook
 * subscriptions, its consumer groups' waiting claims) subscribes with `onRevoked` and lets go of it.
 * What a revocation changes durably (its subscriptions disabled) is written with the revocation itself
 * (`ManagedApiKeys.revoke`). As a table it serves the key verifier: `onChange` tells of a change made
 * here at once and of a revocation seen in a read, so the verifier reads the table again then.
 */
export interface KeyRevocations extends ApiKeyTable {
  /** Calls `listener` with the id of each key found revoked (once per key and process). */
  onRevoked(listener: (keyId: string) => void): void;
  onChange(listener: () => void): void;
  close(): void;
}

/** Reads the live keys every `everyMs` (and at once after a change made here) and tells of those gone since the last read. */
export function watchKeyRevocations(table: ApiKeyTable, options: { everyMs?: number; logger?: Logger } = {}): KeyRevocations {
  const revokedListeners: ((keyId: string) => void)[] = [];
  const changeListeners: (() => void)[] = [];
  let live: ReadonlySet<string> | undefined;
  let reading: Promise<void> | undefined;
  let again = false;
  let closed = false;

  /** Every read of the table goes through here, the verifier's too: a key any request was let in with is seen live. */
  const activeKeyHashes = () => table.activeKeyHashes().then((hashes) => {
    const now = new Set([...hashes.values()].map(String));
    const gone = live === undefined ? [] : [...live].filter((id) => !now.has(id));
    live = now;
    if (gone.length > 0 && !closed) {
      for (const listener of changeListeners) listener();
      for (const keyId of gone) for (const listener of revokedListeners) listener(keyId);
    }
    return hashes;
  });
  const read = (): void => {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = activeKeyHashes().then(() => undefined, (error: unknown) => {
      // A store fault: the next read tells what changed meanwhile.
      options.logger?.debug({ fault: (error as Error).message }, 'key revocations: the key table could not be read');
    }).finally(() => {
      reading = undefined;
      if (again) {
        again = false;
        read();
      }
    });
  };
  table.onChange?.(() => {
    for (const listener of changeListeners) listener();
    read();
  });
  const timer = setInterval(read, options.everyMs ?? KEY_TABLE_REFRESH_MS);
  timer.unref();
  read();

  return {
    activeKeyHashes,
    onChange: (listener) => void changeListeners.push(listener),
    onRevoked: (listener) => void revokedListeners.push(listener),
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
