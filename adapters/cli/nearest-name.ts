// Words people reach for that the commands spell otherwise.
const SYNONYMS: Readonly<Record<string, string>> = {
  delete: 'revoke', remove: 'revoke', rm: 'revoke', del: 'revoke', disable: 'revoke',
  add: 'create', new: 'create', make: 'create',
  ls: 'list', show: 'list', all: 'list',
  follow: 'tail', watch: 'tail', stream: 'tail',
  upgrade: 'migrate', init: 'migrate', setup: 'migrate',
  verify: 'check', integrity: 'check',
  spec: 'openapi', swagger: 'openapi', document: 'openapi',
  start: 'serve', run: 'serve', server: 'serve',
  dump: 'backup', copy: 'backup', export: 'backup',
};

/** Edits (insert, delete, replace, swap two neighbours) from one text to the other. */
function distance(from: string, to: string): number {
  const rows = Array.from({ length: from.length + 1 }, (_, i) => Array.from({ length: to.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= from.length; i++) {
    for (let j = 1; j <= to.length; j++) {
      const cost = from[i - 1] === to[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && from[i - 1] === to[j - 2] && from[i - 2] === to[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[from.length]![to.length]!;
}

/**
 * The one name among `names` that `typed` most likely meant: its words with synonyms replaced, or a
 * name within a couple of typing slips; undefined when none is near or two are equally near.
 */
export function nearestName(typed: string, names: readonly string[]): string | undefined {
  const lowered = typed.toLowerCase().trim();
  const respelled = lowered.split(/\s+/).map((word) => SYNONYMS[word] ?? word).join(' ');
  if (names.includes(respelled)) return respelled;
  const allowed = Math.min(2, Math.floor(lowered.length / 3));
  const scored = names.map((name) => ({ name, edits: distance(lowered, name) })).filter(({ edits }) => edits <= allowed).sort((a, b) => a.edits - b.edits);
  if (scored.length === 0 || (scored.length > 1 && scored[0]!.edits === scored[1]!.edits)) return undefined;
  return scored[0]!.name;
}
