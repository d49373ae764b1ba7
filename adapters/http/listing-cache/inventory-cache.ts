import { PET_AGGREGATE } from '../../../application/index.ts';
import type { Commits, Inventory, InventoryCounts } from '../../../application/index.ts';

const PET_TABLE = PET_AGGREGATE.readModel?.table;

/** The inventory kept exact in memory, with its answer's body ready to send. */
export interface InventoryCache extends Inventory {
  /**
   * The answer's JSON body while the counts it holds are exact, or undefined when none is held; first
   * looks for commits made elsewhere (a promise where that look asks the database, as `ListingCache.get`).
   */
  body(): Buffer | undefined | Promise<Buffer | undefined>;
}

interface Held {
  readonly counts: InventoryCounts;
  readonly body: Buffer;
}

/**
 * The inventory read once, and read again after any commit that changed a pet (or that does not say
 * what it changed: another process's or instance's, a write around the store), the same commit signal
 * the listing cache follows; so that reads between writes cost no query and no serialisation. A read
 * that a commit raced is answered but not kept.
 */
export function cachedInventory(inventory: Inventory, commits: Pick<Commits, 'onCommitted' | 'refresh'>): InventoryCache {
  let held: Held | undefined;
  /** Bumped by every commit that may have changed a pet. */
  let generation = 0;
  commits.onCommitted(({ changes }) => {
    if (changes !== undefined && !changes.some((change) => change.table === PET_TABLE)) return;
    generation += 1;
    held = undefined;
  });
  const read = async (): Promise<InventoryCounts> => {
    const before = generation;
    const counts = await inventory.count();
    if (before === generation) held = { counts, body: Buffer.from(JSON.stringify(counts)) };
    return counts;
  };
  const counts = (): Promise<InventoryCounts> => (held ? Promise.resolve(held.counts) : read());
  const body = () => held?.body;
  return {
    count() {
      const looking = commits.refresh();
      return looking === undefined ? counts() : looking.then(counts);
    },
    body() {
      const looking = commits.refresh();
      return looking === undefined ? body() : looking.then(body);
    },
  };
}
