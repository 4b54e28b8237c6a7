import pino, { type DestinationStream, type Logger } from 'pino';

/** Paths never written to a log line, whatever logs them. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.secret_key',
  '*.secret',
  'secret_key',
  '*.account_number',
  'account_number',
];

/**
 * The main logger: startup, warnings, errors, what a request logs on purpose. By default it writes to
 * standard output synchronously, one write per line, so a line is in the kernel's hands before the
 * call that logged it returns and a `kill -9` right after cannot lose it (pino's default writes
 * asynchronously). These lines are few; the per-request access lines are gathered separately
 * (`createAccessLogger`).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, base: { service: 'kosh' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
