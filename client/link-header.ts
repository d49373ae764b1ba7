// RFC 8288: link-value = "<" URI-Reference ">" *( ";" link-param ); quoted values may hold ";" and ",".
const LINK_VALUE = /<([^>]*)>((?:\s*;(?:[^;,"]|"(?:[^"\\]|\\.)*")*)*)/g;
const LINK_PARAMETER = /;\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;,]*)))?/g;

/**
 * The target of the first link whose relation types include `rel`, resolved against `base` (the
 * answer's URL); undefined when there is none or its target is not a URL.
 */
export function linkTarget(header: string | null, rel: string, base: string | undefined): URL | undefined {
  if (header === null) return undefined;
  for (const [, target, parameters] of header.matchAll(LINK_VALUE)) {
    for (const [, name, quoted, token] of parameters!.matchAll(LINK_PARAMETER)) {
      // rel holds space-separated relation types, compared case-insensitively.
      if (name!.toLowerCase() === 'rel' && (quoted ?? token ?? '').toLowerCase().split(/\s+/).includes(rel)) return parseUrl(target!, base);
    }
  }
  return undefined;
}

function parseUrl(target: string, base: string | undefined): URL | undefined {
  try {
    return new URL(target, base);
  } catch {
    return undefined;
  }
}
