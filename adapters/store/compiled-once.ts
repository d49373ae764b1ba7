import { CompiledQuery } from 'kysely';
import type { Compilable } from 'kysely';

/**
 * A statement that Kysely builds and compiles once, then runs with new values. `build` writes the query
 * with `value(name)` where each value goes; the text compiled from it is kept, and each run puts the
 * values in their places. Building a query tree costs more than SQLite takes to run a small statement
 * (about 150 µs for a claim's read of its waiting events): a statement run on every claim or ack is
 * built once. A list of values (`in`) has a statement of its own for each length it is run with.
 */
export function compiledOnce<Values extends Record<string, unknown>>(
  build: (value: ValuePlace<Values>) => Compilable<unknown>,
): (values: Values) => CompiledQuery {
  type Slot = { readonly name: string; readonly index: number | undefined } | undefined;
  let compiled: { readonly sql: string; readonly parameters: readonly unknown[]; readonly slots: readonly Slot[] } | undefined;
  return (values) => {
    if (compiled === undefined) {
      const marks = new Map<string, Slot>();
      const place = (name: string, index?: number) => {
        const mark = `\u0000value:${name}:${index ?? ''}`;
        marks.set(mark, { name, index });
        return mark;
      };
      const query = build(place as never).compile();
      compiled = { sql: query.sql, parameters: query.parameters, slots: query.parameters.map((parameter) => (typeof parameter === 'string' ? marks.get(parameter) : undefined)) };
    }
    const { sql, parameters, slots } = compiled;
    return CompiledQuery.raw(sql, parameters.map((parameter, at) => {
      const slot = slots[at];
      if (slot === undefined) return parameter;
      const value = values[slot.name];
      return slot.index === undefined ? value : (value as readonly unknown[])[slot.index];
    }));
  };
}

/** Where a value goes in a statement compiled once: `value(name)`, or `value(name, index)` for an item of a list. */
export type ValuePlace<Values extends Record<string, unknown>> = {
  <K extends keyof Values & string>(name: K): Values[K];
  <K extends keyof Values & string>(name: K, index: number): Values[K] extends readonly (infer Item)[] ? Item : never;
};

/** `compiledOnce` for a statement with a list of values: one compiled statement for each length of the list. */
export function compiledForEachLength<Values extends Record<string, unknown>>(
  build: (value: ValuePlace<Values>, length: number) => Compilable<unknown>,
): (values: Values, length: number) => CompiledQuery {
  const byLength = new Map<number, (values: Values) => CompiledQuery>();
  return (values, length) => {
    let statement = byLength.get(length);
    if (!statement) {
      statement = compiledOnce<Values>((value) => build(value, length));
      byLength.set(length, statement);
    }
    return statement(values);
  };
}
