import type { PageScope } from '../../application/index.ts';
import type { CatalogChanges, PetChange } from '../store/catalog-changes.ts';

// What Koa sends for a JSON body; set by hand because a listing's body is already JSON text.
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A listing answer as sent: the JSON body and the `Link` header, if any. */
export interface ListingAnswer {
  readonly body: Buffer;
  readonly link: string | undefined;
}

/** What an answer depends on: the page's scope, the pets of its filter with ids in `(after, through]`. */
export type ListingScope = PageScope;

type Entry = ListingAnswer & ListingScope;

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
 * Whole listing answers, keyed by the raw query string, kept exact by the catalogue's change reports:
 * this process's commits drop exactly the answers whose filter and id range they touch (a new pet
 * past the end of page one leaves page one cached); a commit by another process, or anything the
 * store cannot describe, drops them all. The oldest answers go first when the budget is full.
 */
export function createListingCache(changes: CatalogChanges, budgetBytes = LISTING_CACHE_BYTES): ListingCache {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let generation = 0;

  const drop = (key: string, entry: Entry) => {
    entries.delete(key);
    bytes -= sizeOf(key, entry.body);
  };

  changes.subscribe((changed) => {
    generation += 1;
    if (changed === undefined) {
      entries.clear();
      bytes = 0;
      return;
    }
    for (const [key, entry] of entries) {
      if (changed.some((change) => touches(entry, change))) drop(key, entry);
    }
  });

  return {
    get(querystring) {
      const looking = changes.refresh();
      if (looking === undefined) return entries.get(querystring);
      return looking.then(() => entries.get(querystring));
    },
    mark: () => generation,
    set(querystring, mark, answer, scope) {
      if (mark !== generation) return;
      const size = sizeOf(querystring, answer.body);
      if (size > budgetBytes) return;
      const previous = entries.get(querystring);
      if (previous) drop(querystring, previous);
      for (const [key, entry] of entries) {
        if (bytes + size <= budgetBytes) break;
        drop(key, entry);
      }
      entries.set(querystring, { ...answer, body: ownMemory(answer.body), ...scope });
      bytes += size;
    },
  };
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

function touches(entry: Entry, change: PetChange): boolean {
  if (change.id <= entry.after || change.id > entry.through) return false;
  return entry.status === undefined || change.statuses.includes(entry.status);
}
