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

/**
 * The logger of the one access line per request. Its fields are fixed and none of them can hold a
 * secret (method, path, status, duration, request id, account, mode), so it skips the redaction the
 * main logger applies to everything else; it writes to the same destination.
 */
export function createAccessLogger(main: Logger): Logger {
  const destination = (main as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  return pino({ level: main.level, base: { service: 'kosh' } }, destination);
}
