import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const PG = 'postgres://postgres@127.0.0.1:5432/kosh';
const KEY = Buffer.alloc(32, 7).toString('base64');

describe('worker count', () => {
  it('uses every core on PostgreSQL by default', () => {
    const config = loadConfig({ DATABASE_URL: PG, KOSH_ENCRYPTION_KEY: KEY });
    expect(config.workers).toBe(os.availableParallelism());
    expect(config.workersNotice).toBeUndefined();
  });

  it('takes --workers / KOSH_WORKERS on PostgreSQL', () => {
    expect(loadConfig({ DATABASE_URL: PG, KOSH_ENCRYPTION_KEY: KEY }, { workers: '3' }).workers).toBe(3);
    expect(loadConfig({ DATABASE_URL: PG, KOSH_ENCRYPTION_KEY: KEY, KOSH_WORKERS: '1' }).workers).toBe(1);
  });

  it('runs one worker on PGlite, and says so when more were asked for', () => {
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({}).workersNotice).toBeUndefined();
    const forced = loadConfig({}, { workers: '4' });
    expect(forced.workers).toBe(1);
    expect(forced.workersNotice).toMatch(/4 workers were asked for.*PGlite.*running 1 worker/);
  });

  it('refuses a worker count that is not a positive whole number', () => {
    expect(() => loadConfig({ DATABASE_URL: PG, KOSH_ENCRYPTION_KEY: KEY }, { workers: '0' })).toThrow(
      ConfigError,
    );
    // Named as the operator gave it: the flag, or the setting.
    expect(() => loadConfig({ DATABASE_URL: PG, KOSH_ENCRYPTION_KEY: KEY }, { workers: 'two' })).toThrow(
      "Invalid setting --workers: expected a whole number, got 'two'.",
    );
    expect(() => loadConfig({ DATABASE_URL: PG, KOSH_ENCRYPTION_KEY: KEY, KOSH_WORKERS: 'two' })).toThrow(
      "Invalid setting KOSH_WORKERS: expected a whole number, got 'two'.",
    );
  });
});
