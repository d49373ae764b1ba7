import { SqliteDialect } from 'kysely';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely';
import type { GroupWriterChannel } from './group-writer-channel.ts';

/**
 * Kysely on the group writer's connection, for a write beside the groups (see SqliteWrites.writeOutsideLog):
 * each statement crosses to the writer and runs in the transaction the write holds there.
 */
export class WriterThreadDialect extends SqliteDialect {
  readonly #channel: GroupWriterChannel;

  constructor(channel: GroupWriterChannel) {
    super({ database: { prepare: () => { throw new Error('statements run on the group writer'); }, close() {} } });
    this.#channel = channel;
  }

  override createDriver(): Driver {
    const channel = this.#channel;
    const connection: DatabaseConnection = {
      async executeQuery<R>({ sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
        const reply = await channel.statement(sql, parameters);
        return {
          rows: reply.rows as R[],
          ...(reply.changes === undefined ? {} : { numAffectedRows: BigInt(reply.changes) }),
          ...(reply.lastInsertRowid === undefined ? {} : { insertId: BigInt(reply.lastInsertRowid) }),
        };
      },
      streamQuery() {
        throw new Error('no streaming on the group writer');
      },
    };
    return {
      async init() {},
      acquireConnection: async () => connection,
      async beginTransaction() {
        throw new Error('a write beside the groups is one transaction already');
      },
      async commitTransaction() {},
      async rollbackTransaction() {},
      async releaseConnection() {},
      async destroy() {},
    };
  }
}
