import { PET_AGGREGATE } from '../../../application/index.ts';
import type { Commits, PageScope } from '../../../application/index.ts';
import { createScopeIndex } from './scope-index.ts';
import type { ScopeIndex } from './scope-index.ts';


/** A listing answer as sent: the JSON body and the `Link` header, if any. */
export interface ListingAnswer {
  readonly body: Buffer;
  readonly link: string | undefined;
}

/** What an answer depends on: the page's scope, the pets of its filter with ids in `(after, through]`. */
export type ListingScope = PageScope;

/** A cached answer, with the pet ids it depends on as a closed range (a last page reaches past every id). */
interface Entry extends ListingAnswer {
  readonly key: string;
  readonly status: ListingScope['status'];
  readonly first: number;
  readonly last: number;
}

const PAST_EVERY_ID = Number.MAX_SAFE_INTEGER + 1;

export interface ListingCache {
  /**
   * The answer for this query string, if cached and still exact; first looks for commits made elsewhere.
   * A promise where that look asks the database (PostgreSQL): the answer then includes every commit
   * made before the call.
   */
  get(querystring: string): ListingAnswer | undefined | Promise<ListingAnswer | undefined>;
  /** Taken before reading the catalogue: `set` keeps an answer only if nothing changed since. */
  mark(): number;
  set(querystring: string, mark: number, answer: ListingAnswer, scope: ListingScope): void;
}

/** A budget for the bodies kept: pages, never the whole catalogue, so a million pets cost no more memory than ten. */
export const LISTING_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * Whole listing answers, keyed by the raw query string, kept exact by the store's commits:
 * this process's commits drop exactly the answers whose filter and id range they touch (a new pet
 * past the end of page one leaves page one cached); a commit by another process, or anything the
 * store cannot describe, drops them all. The oldest answers go first when the budget is full.
 * The answers are indexed by filter and id range, so that a commit visits only the answers it drops:
 * the cost of keeping the cache exact does not grow with the number of answers kept.
 */
const PET_TABLE = PET_AGGREGATE.readModel?.table;

export function createListingCache(commits: Commits, budgetBytes = LISTING_CACHE_BYTES): ListingCache {
  const entries = new Map<string, Entry>();
  /** By the status an answer is filtered on (undefined: unfiltered). */
  let byFilter = new Map<Entry['status'], ScopeIndex<Entry>>();
  let bytes = 0;
  let generation = 0;

  const drop = (entry: Entry) => {
    entries.delete(entry.key);
    bytes -= sizeOf(entry.key, entry.body);
  };
  const indexOf = (status: Entry['status']) => {
    let index = byFilter.get(status);
    if (index === undefined) byFilter.set(status, (index = createScopeIndex<Entry>()));
    return index;
  };

  commits.onCommitted(({ changes: changed }) => {
    generation += 1;
    if (changed === undefined) {
      entries.clear();
      byFilter = new Map();
      bytes = 0;
      return;
    }
    for (const { table, id, statuses } of changed) {
      // Only pets are listed here: another read model's rows change no answer.
      if (table !== PET_TABLE) continue;
      byFilter.get(undefined)?.takeHolding(id, drop);
      for (const status of statuses) if (status !== null) byFilter.get(status as Entry['status'])?.takeHolding(id, drop);
    }
  });

  return {
    get(querystring) {
      const looking = commits.refresh();
      if (looking === undefined) return entries.get(querystring);
      return looking.then(() => entries.get(querystring));
    },
    mark: () => generation,
    set(querystring, mark, answer, scope) {
      if (mark !== generation) return;
      const size = sizeOf(querystring, answer.body);
      if (size > budgetBytes) return;
      const previous = entries.get(querystring);
      if (previous) evict(previous);
      for (const entry of entries.values()) {
        if (bytes + size <= budgetBytes) break;
        evict(entry);
      }
      const entry: Entry = {
        key: querystring, body: ownMemory(answer.body), link: answer.link, status: scope.status,
        first: scope.after + 1, last: Math.min(scope.through, PAST_EVERY_ID),
      };
      // No page scope holds no id; such an answer would be one no commit could drop.
      if (entry.first > entry.last) return;
      entries.set(querystring, entry);
      indexOf(entry.status).add(entry);
      bytes += size;
    },
  };

  function evict(entry: Entry): void {
    byFilter.get(entry.status)?.remove(entry);
    drop(entry);
  }
}

// What an entry costs beyond its body and key (the map slot and the entry object), so that many tiny answers stay bounded too.
const ENTRY_OVERHEAD_BYTES = 256;

function sizeOf(key: string, body: Buffer): number {
  return body.length + key.length + ENTRY_OVERHEAD_BYTES;
}

/**
 * A body that is a slice of Node's shared 8 KiB buffer pool (what `Buffer.from` gives for short strings)
 * would keep its whole slab alive while cached: copied into memory of its own, it costs what the budget counts.
 */
function ownMemory(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
  const own = Buffer.allocUnsafeSlow(body.byteLength);
  body.copy(own);
  return own;
}
