// One link-value of RFC 8288: <target> followed by ;-parameters (quoted values may hold ; and ,).
const LINK_VALUE = /<([^>]*)>((?:\s*;\s*(?:[^;,"]|"[^"]*")*)*)/g;
const REL_PARAMETER = /^\s*rel\s*=\s*(?:"([^"]*)"|([^\s";,]+))\s*$/i;

/** The target of the first link whose relation types include `rel`, resolved against `base`; undefined when there is none. */
export function linkTarget(header: string | null, rel: string, base: string): URL | undefined {
  if (header === null) return undefined;
  for (const [, target, parameters] of header.matchAll(LINK_VALUE)) {
    for (const parameter of parameters!.split(';')) {
      const match = REL_PARAMETER.exec(parameter);
      const relations = (match?.[1] ?? match?.[2])?.toLowerCase().split(/\s+/);
      if (relations?.includes(rel)) return new URL(target!, base);
    }
  }
  return undefined;
}
