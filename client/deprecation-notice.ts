import { linkTarget } from './link-header.ts';

/** What the service says about an operation it has deprecated, read from the answer's headers. */
export interface DeprecationNotice {
  /** The client method that called it, e.g. `getPet`. */
  readonly operation: string;
  /** Since when it is deprecated (the `Deprecation` header), when the service gave a date. */
  readonly deprecatedAt: Date | undefined;
  /** When it stops working (the `Sunset` header), when the service gave one. */
  readonly sunsetAt: Date | undefined;
  /** What replaces it (`Link: <…>; rel="successor-version"`), when the service named it. */
  readonly successor: string | undefined;
  /** One sentence for a log. */
  readonly message: string;
}

/** The notice an answer carries, or undefined when it has no `Deprecation` header. */
export function readDeprecationNotice(operation: string, response: Response): DeprecationNotice | undefined {
  const deprecation = response.headers.get('deprecation');
  if (deprecation === null) return undefined;
  const deprecatedAt = parseDeprecationDate(deprecation);
  const sunsetAt = parseHttpDate(response.headers.get('sunset'));
  const successor = linkTarget(response.headers.get('link'), 'successor-version', response.url || undefined)?.href;
  const message = [
    `petstore: ${operation} is deprecated`,
    deprecatedAt && ` since ${day(deprecatedAt)}`,
    sunsetAt && ` and will stop working on ${day(sunsetAt)}`,
    successor && `; its successor is ${successor}`,
  ].filter(Boolean).join('');
  return { operation, deprecatedAt, sunsetAt, successor, message };
}

/** RFC 9745 sends `@<seconds since 1970>`; earlier drafts sent an HTTP date or `true` (no date). */
function parseDeprecationDate(value: string): Date | undefined {
  const seconds = /^@(-?\d+)$/.exec(value.trim())?.[1];
  return seconds === undefined ? parseHttpDate(value) : new Date(Number(seconds) * 1000);
}

function parseHttpDate(value: string | null): Date | undefined {
  if (value === null) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : new Date(time);
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}
