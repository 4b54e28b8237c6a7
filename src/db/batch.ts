import pg from 'pg';

/** One statement of a batch: a prepared statement's name or SQL text (parsed as the unnamed statement). */
export interface BatchStatement {
  name?: string;
  text: string;
  values?: readonly unknown[];
}

/** The part of node-postgres' connection a batch writes to (the extended query protocol's messages). */
interface WireConnection {
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
  parse(message: { text: string; name: string }): void;
  bind(message: { statement: string; values: unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
}

type Rows = Record<string, unknown>[];

/** node-postgres' result of one statement; the fields Kosh reads and presets are named here. */
interface Result {
  rows: Rows;
  fields: unknown[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: object | null;
  addFields(fields: unknown[]): void;
  addCommandComplete(message: unknown): void;
  parseRow(values: unknown[]): Record<string, unknown>;
}
const ResultClass = (pg as unknown as { Result: new () => Result }).Result;

/** node-postgres' own value mapping (Dates, JSON, Buffers, arrays), as its queries bind values. */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils
  .prepareValue;

/**
 * What a prepared statement's rows look like, as PostgreSQL described them the first time the
 * statement ran on a connection: the columns, node-postgres' parser for each, and the empty row it
 * copies for each row. A statement that returns no rows has no columns.
 */
interface Shape {
  fields: unknown[];
  parsers: unknown[] | undefined;
  empty: object | null;
}

/**
 * Shapes per connection and statement name. A prepared statement's shape cannot change while it
 * exists on its connection (PostgreSQL refuses to run it with "cached plan must not change result
 * type" instead), so a statement described once on a connection is not described there again: the
 * Describe message, PostgreSQL's RowDescription and its parsing (the columns' names and parsers,
 * for every statement run) are skipped. A new connection, after a restart or a migration, learns
 * its own.
 */
const shapes = new WeakMap<WireConnection, Map<string, Shape>>();

function shapeOf(connection: WireConnection, name: string | undefined): Shape | undefined {
  return name === undefined ? undefined : shapes.get(connection)?.get(name);
}

function remember(connection: WireConnection, name: string, result: Result): void {
  let known = shapes.get(connection);
  if (!known) {
    known = new Map();
    shapes.set(connection, known);
  }
  known.set(name, {
    fields: result.fields,
    parsers: result._parsers,
    empty: result._prebuiltEmptyResultObject,
  });
}

function connectionOf(client: pg.ClientBase): WireConnection {
  return (client as unknown as { connection: WireConnection }).connection;
}

/**
 * Whether the connection has parsed `name` with this text: a batch of several statements binds such
 * a statement without parsing it, so the statement's first use on a connection goes alone (it is then
 * known parsed exactly when PostgreSQL said so).
 */
export function isParsed(client: pg.ClientBase, name: string, text: string): boolean {
  return connectionOf(client).parsedStatements[name] === text;
}

/**
 * Statements in one write and one round trip: each is bound and executed with the extended protocol
 * (and described, unless its shape on this connection is known), and one Sync ends them all.
 * PostgreSQL runs them in order; the first that fails skips the rest, and the batch fails with its
 * error. Outside a transaction block they form one implicit transaction; after a BEGIN (which may be
 * the batch's first statement) they are part of it.
 *
 * A batch of one prepared statement parses it when its connection has not (node-postgres then notes
 * it parsed, as for its own queries); in a batch of several, a named statement must already be
 * parsed on the connection (`isParsed`). SQL text is parsed as the unnamed statement right before it
 * is bound. Each statement's answer goes to its own result, in order.
 */
class StatementBatch extends pg.Query {
  private readonly statements: BatchStatement[];
  private readonly mapped: unknown[][] | undefined;
  private readonly mappingError: Error | undefined;
  readonly results: Result[];
  /** The one prepared statement this batch may parse (a batch of one). */
  private readonly parsable: string | undefined;
  private connection: WireConnection | undefined;
  /** The statement whose answer is being read, and whether it was described in this batch. */
  private reading = 0;
  private described = false;

  constructor(statements: BatchStatement[], callback: (error: Error | undefined, result: unknown) => void) {
    const only = statements.length === 1 ? statements[0] : undefined;
    // The text, not a config object: node-postgres copies a config object property by property
    // (about 2.5 µs a query, more than everything else it does here); a string it only wraps.
    super(
      only?.name !== undefined ? only.text : statements.map((statement) => statement.text).join(';\n'),
      callback,
    );
    // Its parse-complete handler notes a named statement parsed on the connection by this name.
    if (only?.name !== undefined) (this as unknown as { name: string }).name = only.name;
    this.statements = statements;
    this.parsable = only?.name;
    this.results = statements.map(() => new ResultClass());
    (this as unknown as { _results: Result[] })._results = this.results;
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
    this.connection = connection;
    if (this.mapped === undefined) {
      // Nothing runs: the Sync's ReadyForQuery reports the error (node-postgres' Query does the same).
      this.cancel(this.mappingError!);
      connection.sync();
      return;
    }
    this.statements.forEach((statement, index) => {
      const { name, text } = statement;
      if (name === undefined) connection.parse({ text, name: '' });
      else if (connection.parsedStatements[name] === undefined && this.parsable === name) {
        connection.parse({ text, name });
        connection.submittedNamedStatements[name] = text;
      }
      connection.bind({ statement: name ?? '', values: this.mapped![index]! });
      const shape = shapeOf(connection, name);
      if (shape) {
        const result = this.results[index]!;
        result.fields = shape.fields;
        result._parsers = shape.parsers;
        result._prebuiltEmptyResultObject = shape.empty;
      } else {
        connection.describe({ type: 'P', name: '' });
      }
      connection.execute({ portal: '' });
    });
    connection.sync();
  }

  private cancel(error: Error): void {
    const self = this as unknown as { _canceledDueToError: Error | false };
    if (!self._canceledDueToError) self._canceledDueToError = error;
  }

  private get canceled(): boolean {
    return Boolean((this as unknown as { _canceledDueToError: Error | false })._canceledDueToError);
  }

  /** The result of the statement being answered; none when PostgreSQL answers more than was sent. */
  private current(): Result | undefined {
    const result = this.results[this.reading];
    if (!result) this.cancel(new Error('PostgreSQL answered a statement the batch did not send.'));
    return result;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    const result = this.current();
    if (!result) return;
    result.addFields(message.fields);
    this.described = true;
    const name = this.statements[this.reading]!.name;
    if (name !== undefined) remember(this.connection!, name, result);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    const result = this.current();
    if (!result || this.canceled) return;
    if (message.fields.length !== result.fields.length) {
      this.cancel(new Error('A row does not have the columns its statement was described with.'));
      return;
    }
    try {
      result.rows.push(result.parseRow(message.fields));
    } catch (error) {
      this.cancel(error instanceof Error ? error : new Error(String(error)));
    }
  }

  handleCommandComplete(message: unknown): void {
    const result = this.current();
    if (!result) return;
    result.addCommandComplete(message);
    const name = this.statements[this.reading]!.name;
    // Described and answered without a RowDescription: the statement returns no rows.
    if (name !== undefined && !this.described && !shapeOf(this.connection!, name)) {
      remember(this.connection!, name, result);
    }
    this.reading++;
    this.described = false;
  }

  /** Every statement answered: checked before the batch reports its results. */
  get complete(): boolean {
    return this.reading === this.statements.length;
  }
}

/** Sends `statements` on `client` as one batch; resolves with each statement's rows, in order. */
export function runBatch(client: pg.ClientBase, statements: BatchStatement[]): Promise<Rows[]> {
  return new Promise((resolve, reject) => {
    const batch = new StatementBatch(statements, (error) => {
      if (error) return reject(error);
      if (!batch.complete) {
        return reject(new Error(`A batch of ${statements.length} statements was not answered in full.`));
      }
      resolve(batch.results.map((each) => each.rows));
    });
    client.query(batch);
  });
}
