import pino, {
  type Bindings,
  type ChildLoggerOptions,
  type Level,
  type LevelWithSilent,
  type Logger,
} from 'pino';

type LogArguments = [unknown, ...unknown[]];

/**
 * The logger of one request, made only when something logs through it. A pino child serialises its
 * bindings when it is created; most requests log nothing but their access line (written from known
 * fields by the server, see `createAccessLogger`), so a child per request — two, with the account
 * added after authentication — was the largest logging cost of a request. Bindings added by `bind`
 * are in every line logged afterwards, exactly as with a child.
 */
export class RequestLogger {
  private logger: Logger | undefined;
  private added: Bindings | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions = {},
  ) {}

  /** Adds bindings (e.g. the account once authenticated) to every later line. */
  bind(more: Bindings): void {
    this.added = this.added ? { ...this.added, ...more } : more;
    this.logger = undefined;
  }

  get level(): LevelWithSilent | string {
    return this.logger?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilent | string) {
    this.options.level = level;
    if (this.logger) this.logger.level = level;
  }

  fatal = (...args: LogArguments) => this.write('fatal', args);
  error = (...args: LogArguments) => this.write('error', args);
  warn = (...args: LogArguments) => this.write('warn', args);
  info = (...args: LogArguments) => this.write('info', args);
  debug = (...args: LogArguments) => this.write('debug', args);
  trace = (...args: LogArguments) => this.write('trace', args);
  silent = () => {};

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.materialise().child(bindings, options);
  }

  private write(level: Level, args: LogArguments): void {
    const threshold = pino.levels.values[this.level] ?? Number.POSITIVE_INFINITY;
    if ((pino.levels.values[level] ?? 0) < threshold) return;
    (this.materialise()[level] as (...logged: unknown[]) => void)(...args);
  }

  private materialise(): Logger {
    this.logger ??= this.parent.child(
      this.added ? { ...this.bindings, ...this.added } : this.bindings,
      this.options,
    );
    return this.logger;
  }
}

/** The fields of one access line. */
export interface AccessEntry {
  reqId: string;
  account_id?: string | undefined;
  mode?: string | undefined;
  method: string;
  url: string;
  status: number;
  ms: number;
}

/** Writes the access line of each request, and flushes what it has buffered. */
export interface AccessLogger {
  write(entry: AccessEntry): void;
  flush(): void;
}

/**
 * The one access line per request. Its fields are fixed and none of them can hold a secret (method,
 * path, status, duration, request id, account, mode), so the line is written as pino would write it
 * (`level`, `time`, `service`, the fields, `msg`) but built directly from those fields: pino's
 * general serialisation was about a tenth of a cached request's CPU. Strings go through
 * JSON.stringify; an absent account or mode is left out, as pino leaves out undefined fields. No line
 * is written when the main logger's level is above `info`.
 *
 * With `buffered` it writes to standard output through its own buffer: lines are gathered and
 * written about 4 KB at a time (at least once a second, and on close or exit) instead of one write
 * per request. A chunk never splits a line and stays within 4,096 bytes, the size a pipe writes
 * atomically, so the lines of several workers sharing one pipe never interleave. What a `kill -9`
 * can lose is the unwritten part: at most a second of access lines, never a warning or an error
 * (those go through the main logger, one write each). Otherwise it writes to the main logger's
 * destination.
 *
 * The destination only writes whole chunks: left to gather the lines itself, it measured its whole
 * pending chunk again on every line (docs/performance.md, "The access line's buffer").
 * `chunkWriter` replaces it (tests).
 */
export function createAccessLogger(
  main: Logger,
  options: { buffered?: boolean; chunkWriter?: (chunk: string) => void } = {},
): AccessLogger {
  const enabled = main.isLevelEnabled('info');
  let emit: (line: string) => void;
  let flush = () => {};
  if (options.buffered) {
    const destination = options.chunkWriter ?? stdoutChunkWriter();
    let pending = '';
    let pendingBytes = 0;
    const take = () => {
      const chunk = pending;
      pending = '';
      pendingBytes = 0;
      return chunk;
    };
    flush = () => {
      if (pendingBytes > 0) destination(take());
    };
    // A line that does not fit is gathered into the next chunk before the full one is written, so a
    // write that throws does not lose it.
    emit = (line) => {
      const bytes = Buffer.byteLength(line);
      const full = pendingBytes > 0 && pendingBytes + bytes > ACCESS_CHUNK_BYTES ? take() : '';
      pending += line;
      pendingBytes += bytes;
      if (full) destination(full);
    };
    setInterval(flush, 1000).unref();
    // Whatever is still gathered is written when the process exits, however it exits normally.
    process.once('exit', flush);
  } else {
    const destination = (main as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
    emit = (line) => destination.write(line);
  }
  return {
    write(entry) {
      if (!enabled) return;
      const account =
        entry.account_id === undefined ? '' : `,"account_id":${JSON.stringify(entry.account_id)}`;
      const mode = entry.mode === undefined ? '' : `,"mode":${JSON.stringify(entry.mode)}`;
      emit(
        `{"level":30,"time":${Date.now()},"service":"kosh","reqId":${JSON.stringify(entry.reqId)}${account}${mode},"method":${JSON.stringify(entry.method)},"url":${JSON.stringify(entry.url)},"status":${entry.status},"ms":${entry.ms},"msg":"request"}\n`,
      );
    },
    flush,
  };
}

/**
 * Writes each chunk to standard output at once, through pino's destination (it retries a refused
 * write). Synchronously: an asynchronous write still in flight when the process exits is lost
 * (flushing at exit writes only what is still gathered), and a later chunk would overtake it. One
 * write per ~4 KB keeps the cost of writing synchronously small.
 */
function stdoutChunkWriter(): (chunk: string) => void {
  const stream = pino.destination({ dest: 1, sync: true, minLength: 0, maxWrite: ACCESS_CHUNK_BYTES });
  return (chunk) => {
    stream.write(chunk);
  };
}

/** PIPE_BUF on Linux: a write to a pipe of at most this many bytes is never interleaved with another. */
const ACCESS_CHUNK_BYTES = 4096;

/** Longest request path written in an access line, so that a line always fits in one chunk. */
export const ACCESS_URL_MAX = 1024;
