import { PET_AGGREGATE } from '../../../application/index.ts';
import type { Commits, Inventory, InventoryCounts } from '../../../application/index.ts';

const PET_TABLE = PET_AGGREGATE.readModel?.table;

/**
 * The inventory kept exact in memory: read once, and read again after any commit that changed a pet
 * (or that does not say what it changed: another process's, a write around the store), so that reads
 * between writes cost no query. A read that a commit raced is answered but not kept. Like the listing
 * cache, it looks for other processes' commits before answering.
 */
export function cachedInventory(inventory: Inventory, commits: Pick<Commits, 'onCommitted' | 'refresh'>): Inventory {
  let counts: InventoryCounts | undefined;
  /** Bumped by every commit that may have changed a pet. */
  let generation = 0;
  commits.onCommitted(({ changes }) => {
    if (changes !== undefined && !changes.some((change) => change.table === PET_TABLE)) return;
    generation += 1;
    counts = undefined;
  });
  const read = async (): Promise<InventoryCounts> => {
    const before = generation;
    const read = await inventory.count();
    if (before === generation) counts = read;
    return read;
  };
  const answer = (): Promise<InventoryCounts> => (counts ? Promise.resolve(counts) : read());
  return {
    count() {
      const looking = commits.refresh();
      return looking === undefined ? answer() : looking.then(answer);
    },
  };
}
