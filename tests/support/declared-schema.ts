import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { postgresType, TABLES } from '../../adapters/store/schema.ts';
import type { ColumnDeclaration, TableDeclaration } from '../../adapters/store/schema.ts';

/** A table as a schema comparison sees it, in a form both databases can be brought to. */
export interface TableShape {
  readonly columns: readonly string[];
  readonly primaryKey: readonly string[];
  /** Each unique constraint's columns, sorted (SQLite names them itself). */
  readonly unique: readonly string[];
  /** Each plain index's name and columns. */
  readonly indexes: Readonly<Record<string, string>>;
}

type Dialect = 'sqlite' | 'postgres';

/** A column as `name type [not null] [generated …] [default …]`, the type in the dialect's own name. */
function columnText(dialect: Dialect, name: string, column: ColumnDeclaration): string {
  const type = dialect === 'postgres' ? postgresType(column.type) : column.type === 'text' ? 'text' : 'integer';
  const generated = column.generated === undefined ? '' : dialect === 'postgres' ? ` generated ${column.generated}` : ' autoincrement';
  return `${name} ${type}${column.nullable ? '' : ' not null'}${generated}${column.default === undefined ? '' : ` default ${column.default}`}`;
}

/** What `schema.ts` declares, for `dialect`. */
export function declaredShape(dialect: Dialect): Record<string, TableShape> {
  const shapes: Record<string, TableShape> = {};
  for (const table of TABLES as readonly TableDeclaration[]) {
    if (table.only !== undefined && table.only !== dialect) continue;
    shapes[table.name] = {
      columns: Object.entries(table.columns).map(([name, column]) => columnText(dialect, name, column)),
      primaryKey: [...table.primaryKey],
      unique: Object.values(table.unique ?? {}).map((columns) => columns.join(', ')).sort(),
      indexes: Object.fromEntries(Object.entries(table.indexes ?? {}).map(([name, columns]) => [name, columns.join(', ')])),
    };
  }
  return shapes;
}

/** The store's tables as the migrated SQLite database has them (not Kysely's migration tables). */
export async function sqliteShape(db: Kysely<any>): Promise<Record<string, TableShape>> {
  const { rows: tables } = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' order by name`.execute(db);
  const shapes: Record<string, TableShape> = {};
  for (const table of tables) {
    const { rows: columns } = await sql<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>`
      select * from pragma_table_info(${table.name}) order by cid`.execute(db);
    const autoincrement = /autoincrement/i.test(table.sql);
    const { rows: indexes } = await sql<{ name: string; unique: number; origin: string }>`select * from pragma_index_list(${table.name})`.execute(db);
    const unique: string[] = [];
    const plain: Record<string, string> = {};
    for (const index of indexes) {
      if (index.origin === 'pk') continue;
      const { rows: parts } = await sql<{ name: string }>`select name from pragma_index_info(${index.name}) order by seqno`.execute(db);
      const list = parts.map((part) => part.name).join(', ');
      if (index.origin === 'u') unique.push(list);
      else plain[index.name] = list;
    }
    shapes[table.name] = {
      columns: columns.map((column) => {
        const generated = autoincrement && column.pk > 0 ? ' autoincrement' : '';
        // A key column counts as not null, as on PostgreSQL: SQLite lets a key that is not the rowid hold
        // NULL only for compatibility with its own old versions, and the store never writes one.
        const notNull = column.notnull === 1 || column.pk > 0;
        return `${column.name} ${column.type.toLowerCase()}${notNull ? ' not null' : ''}${generated}${column.dflt_value === null ? '' : ` default ${column.dflt_value}`}`;
      }),
      primaryKey: columns.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((column) => column.name),
      unique: unique.sort(),
      indexes: plain,
    };
  }
  return shapes;
}

/** The store's tables as the migrated PostgreSQL database has them (not Kysely's migration tables). */
export async function postgresShape(db: Kysely<any>): Promise<Record<string, TableShape>> {
  const { rows: columns } = await sql<{
    table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null; identity_generation: string | null;
  }>`
    select table_name, column_name, data_type, is_nullable, column_default, identity_generation from information_schema.columns
    where table_schema = current_schema() and table_name not like 'kysely_%' order by table_name, ordinal_position`.execute(db);
  const { rows: indexes } = await sql<{ table_name: string; index_name: string; is_primary: boolean; is_unique: boolean; is_constraint: boolean; columns: string[] }>`
    select t.relname as table_name, i.relname as index_name, x.indisprimary as is_primary, x.indisunique as is_unique,
      exists (select from pg_constraint c where c.conindid = x.indexrelid) as is_constraint,
      array(select a.attname from unnest(x.indkey) with ordinality as k(attnum, n)
        join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n)::text[] as columns
    from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
    where t.relnamespace = current_schema()::regnamespace and t.relkind = 'r' and t.relname not like 'kysely_%'`.execute(db);
  const shapes: Record<string, { columns: string[]; primaryKey: string[]; unique: string[]; indexes: Record<string, string> }> = {};
  const shape = (table: string) => (shapes[table] ??= { columns: [], primaryKey: [], unique: [], indexes: {} });
  for (const column of columns) {
    const generated = column.identity_generation === null ? '' : ` generated ${column.identity_generation.toLowerCase()}`;
    shape(column.table_name).columns.push(
      `${column.column_name} ${column.data_type}${column.is_nullable === 'NO' ? ' not null' : ''}${generated}${column.column_default === null ? '' : ` default ${column.column_default}`}`,
    );
  }
  for (const index of indexes) {
    const table = shape(index.table_name);
    if (index.is_primary) table.primaryKey.push(...index.columns);
    else if (index.is_unique && index.is_constraint) table.unique.push(index.columns.join(', '));
    else table.indexes[index.index_name] = index.columns.join(', ');
  }
  for (const table of Object.values(shapes)) table.unique.sort();
  return shapes;
}
