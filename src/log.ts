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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, base: { service: 'kosh' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination,
  );
}
