import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PROVIDER_NAMES, PROVIDERS } from '../../src/connectors/registry.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';

describe('the provider registry', () => {
  const settings = loadConfig({}).providers;

  it.each(PROVIDER_NAMES)("lists the banks and wallets %s's connector takes, no more, no fewer", (name) => {
    const kind = PROVIDERS[name];
    const credentials = Object.fromEntries(
      [...kind.publicFields, ...kind.secretFields].map((field) => [field, `${field}_1234`]),
    );
    const connector = kind.create(credentials, settings);
    expect(connector.methods).toBeDefined();
    expect([...kind.methods.netbanking].sort()).toEqual([...(connector.methods?.netbanking ?? [])].sort());
    expect([...kind.methods.wallet].sort()).toEqual([...(connector.methods?.wallet ?? [])].sort());
  });

  it.each(PROVIDER_NAMES)(
    'takes from the Kosh catalogue only (%s): nothing a merchant could not enable',
    (name) => {
      const banks = SANDBOX_BANKS.map((bank) => bank.code);
      const wallets = SANDBOX_WALLETS.map((wallet) => wallet.code);
      const { methods } = PROVIDERS[name];
      expect(methods.netbanking.filter((code) => !banks.includes(code))).toEqual([]);
      expect(methods.wallet.filter((code) => !wallets.includes(code))).toEqual([]);
    },
  );
});
