import pg from 'pg';

/** One statement of a batch: a prepared statement's name (already parsed on the connection) or SQL text. */
export interface BatchStatement {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** The part of node-postgres' connection a batch writes to (the extended query protocol's messages). */
interface WireConnection {
  parsedStatements: Record<string, string | undefined>;
  parse(message: { text: string; name: string }): void;
  bind(message: { statement: string; values: unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
}

type Rows = Record<string, unknown>[];
interface ResultLike {
  rows: Rows;
}

/** node-postgres' own value mapping (Dates, JSON, Buffers, arrays), as its queries bind values. */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils
  .prepareValue;

function connectionOf(client: pg.ClientBase): WireConnection {
  return (client as unknown as { connection: WireConnection }).connection;
}

/**
 * Whether the connection has parsed `name` with this text: a batch binds such a statement without
 * parsing it, so the statement's first use on a connection goes alone (it is then known parsed
 * exactly when PostgreSQL said so).
 */
export function isParsed(client: pg.ClientBase, name: string, text: string): boolean {
  return connectionOf(client).parsedStatements[name] === text;
}

/**
 * Several statements in one write and one round trip: each is bound, described and executed with the
 * extended protocol, and one Sync ends them all. PostgreSQL runs them in order; the first that fails
 * skips the rest, and the batch fails with its error. Outside a transaction block they form one
 * implicit transaction; after a BEGIN (which may be the batch's first statement) they are part of it.
 *
 * node-postgres' own multi-result handling (one result per completed command) collects the answers;
 * only the messages are Kosh's: a named statement must already be parsed on the connection
 * (`isParsed`), SQL text is parsed as the unnamed statement right before it is bound.
 */
class StatementBatch extends pg.Query {
  private readonly statements: BatchStatement[];
  private readonly mapped: unknown[][] | undefined;
  private readonly mappingError: Error | undefined;

  constructor(statements: BatchStatement[], callback: (error: Error | undefined, result: unknown) => void) {
    super({ text: statements.map((statement) => statement.text).join(';\n') }, callback);
    this.statements = statements;
    // Values are mapped before anything is written, so that a value node-postgres cannot send fails
    // the batch without sending half of it.
    try {
      this.mapped = statements.map((statement) =>
        (statement.values ?? []).map((value) => prepareValue(value)),
      );
    } catch (error) {
      this.mappingError = error instanceof Error ? error : new Error(String(error));
    }
  }

  /** Always the extended protocol (node-postgres' Query asks this before `prepare`). */
  requiresPreparation(): boolean {
    return true;
  }

  /** Writes every statement's messages, corked by node-postgres into one write, and one Sync. */
  prepare(connection: WireConnection): void {
    if (this.mapped === undefined) {
      // Nothing runs: the Sync's ReadyForQuery reports the error (node-postgres' Query does the same).
      (this as unknown as { _canceledDueToError: Error | undefined })._canceledDueToError = this.mappingError;
      connection.sync();
      return;
    }
    this.statements.forEach((statement, index) => {
      if (statement.name === undefined) connection.parse({ text: statement.text, name: '' });
      connection.bind({ statement: statement.name ?? '', values: this.mapped![index]! });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '' });
    });
    connection.sync();
  }
}

/** Sends `statements` on `client` as one batch; resolves with each statement's rows, in order. */
export function runBatch(client: pg.ClientBase, statements: BatchStatement[]): Promise<Rows[]> {
  return new Promise((resolve, reject) => {
    const batch = new StatementBatch(statements, (error, result) => {
      if (error) return reject(error);
      const results = (Array.isArray(result) ? result : [result]) as ResultLike[];
      if (results.length !== statements.length) {
        return reject(
          new Error(`A batch of ${statements.length} statements returned ${results.length} results.`),
        );
      }
      resolve(results.map((each) => each.rows));
    });
    client.query(batch);
  });
}
