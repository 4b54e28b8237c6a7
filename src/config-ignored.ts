import { CURRENCIES } from './domain/money.js';

/**
 * `KOSH_*` variables that are not the server's settings: the `kosh` command's API client, the
 * example shop and the test suite read them (docs/cli.md, examples/merchant, docs/testing.md).
 */
const READ_ELSEWHERE = new Set([
  'KOSH_API_KEY',
  'KOSH_SECRET_KEY',
  'KOSH_API_URL',
  'KOSH_URL',
  'KOSH_WEBHOOK_SECRET',
  'KOSH_RETURN_SECRET',
  'KOSH_FUZZ_RUNS',
  'KOSH_PG_BIN',
  'KOSH_SLOWEST_FILES',
  'KOSH_RECORD_DURATIONS',
]);

/** The settings a newcomer guesses for the listening address, which is PORT and HOST. */
const ADDRESS_GUESSES: Record<string, string> = { KOSH_PORT: 'PORT', KOSH_HOST: 'HOST' };

/**
 * One sentence for each `KOSH_*` variable in the environment that the server's settings did not
 * read: a misspelt setting, or an amount limit for a currency Kosh does not take, would otherwise
 * be ignored in silence and the server run on a default the operator meant to change.
 */
export function ignoredSettings(
  env: Record<string, string | undefined>,
  read: ReadonlySet<string>,
): string[] {
  const notices: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('KOSH_') || env[name] === undefined || read.has(name)) continue;
    if (READ_ELSEWHERE.has(name) || name.startsWith('KOSH_TEST_')) continue;
    const address = ADDRESS_GUESSES[name];
    const amountLimit = /^KOSH_M(?:IN|AX)_AMOUNT_(.*)$/.exec(name);
    if (address) {
      notices.push(
        `${name} is not a setting and is ignored: the listening address is ${address} (or --${address.toLowerCase()}).`,
      );
    } else if (amountLimit) {
      notices.push(
        `${name} is ignored: '${amountLimit[1]}' is not a currency Kosh takes (${Object.keys(CURRENCIES).join(', ')}).`,
      );
    } else {
      notices.push(`${name} is not a setting and is ignored (docs/configuration.md lists every setting).`);
    }
  }
  return notices;
}
