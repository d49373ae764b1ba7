/**
 * Id ranges `[first, last]` (whole numbers from 1 to 2^53), kept so that finding every range that holds
 * a given id visits those ranges and a bounded number of others, however many ranges are kept.
 *
 * Each range lives in one node of a binary split of the id space: the smallest block (a power of two,
 * aligned) that holds it whole. A range in a block of 2^L ids with L ≥ 1 straddles the block's middle,
 * so an id below the middle lies in exactly those ranges that start at or before it, and an id at or
 * past it in those that end at or after it: each a prefix of one of the node's two sorted lists. An id
 * lies in at most one block of each size, so a look-up asks at most one node per size in use (55 sizes).
 */
export interface IndexedRange {
  readonly first: number;
  readonly last: number;
}

interface Node<T extends IndexedRange> {
  /** The block's middle id; unused when a block is one id. */
  readonly middle: number;
  /** Ranges by `first`, ascending, and by `last`, descending; a removed range stays listed until passed or swept. */
  byFirst: T[];
  byLast: T[];
  live: number;
}

const SIZES = 55;
const POWERS = Array.from({ length: SIZES }, (_, size) => 2 ** size);

export interface ScopeIndex<T extends IndexedRange> {
  add(range: T): void;
  /** Stops finding `range`; what the index holds of it is swept away later, in time proportional to what was added. */
  remove(range: T): void;
  /** Calls `found` once for each range holding `id`, and removes it. */
  takeHolding(id: number, found: (range: T) => void): void;
}

export function createScopeIndex<T extends IndexedRange>(): ScopeIndex<T> {
  const levels: Map<number, Node<T>>[] = Array.from({ length: SIZES }, () => new Map());
  const nodeOf = new Map<T, Node<T>>();
  /** The block sizes that hold ranges now, so that a look-up asks only those. */
  const used = new Set<number>();

  const sweep = (node: Node<T>) => {
    node.byFirst = node.byFirst.filter((range) => nodeOf.get(range) === node);
    node.byLast = node.byLast.filter((range) => nodeOf.get(range) === node);
  };

  const forget = (range: T, node: Node<T>, level: number, block: number) => {
    nodeOf.delete(range);
    node.live -= 1;
    if (node.live === 0) {
      levels[level]!.delete(block);
      if (levels[level]!.size === 0) used.delete(level);
    } else if (node.byFirst.length + node.byLast.length > 4 * node.live + 16) {
      sweep(node);
    }
  };

  return {
    add(range) {
      const level = blockLevel(range.first, range.last);
      const block = Math.floor(range.first / POWERS[level]!);
      let node = levels[level]!.get(block);
      if (node === undefined) {
        node = { middle: level === 0 ? block : block * POWERS[level]! + POWERS[level - 1]!, byFirst: [], byLast: [], live: 0 };
        levels[level]!.set(block, node);
        used.add(level);
      }
      insertSorted(node.byFirst, range, (a, b) => a.first - b.first);
      insertSorted(node.byLast, range, (a, b) => b.last - a.last);
      node.live += 1;
      nodeOf.set(range, node);
    },
    remove(range) {
      const node = nodeOf.get(range);
      if (node === undefined) return;
      const level = blockLevel(range.first, range.last);
      forget(range, node, level, Math.floor(range.first / POWERS[level]!));
    },
    takeHolding(id, found) {
      // A size emptied meanwhile leaves the set; deleting while iterating a Set is well defined.
      for (const level of used) {
        const block = Math.floor(id / POWERS[level]!);
        const node = levels[level]!.get(block);
        if (node === undefined) continue;
        const fromBelow = level === 0 || id < node.middle;
        const list = fromBelow ? node.byFirst : node.byLast;
        let passed = 0;
        while (passed < list.length) {
          const range = list[passed]!;
          if (fromBelow ? range.first > id : range.last < id) break;
          passed += 1;
          if (nodeOf.get(range) !== node) continue;
          forget(range, node, level, block);
          found(range);
        }
        // What was passed is found or already removed: off this list for good.
        if (passed > 0 && levels[level]!.get(block) === node) list.splice(0, passed);
      }
    },
  };
}

/** The size (as a power of two) of the smallest aligned block holding both ids. */
function blockLevel(first: number, last: number): number {
  const high = Math.floor(first / 2 ** 32) ^ Math.floor(last / 2 ** 32);
  if (high !== 0) return 64 - Math.clz32(high);
  return 32 - Math.clz32((first >>> 0) ^ (last >>> 0));
}

function insertSorted<T>(list: T[], item: T, compare: (a: T, b: T) => number): void {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(list[middle]!, item) <= 0) low = middle + 1;
    else high = middle;
  }
  list.splice(low, 0, item);
}
