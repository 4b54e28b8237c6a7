import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../connectors/sandbox/catalogue.js';

/** The methods object of seed §2.3, without its constant `entity`. */
export interface MethodsConfig {
  card_networks: { diners: boolean; amex: boolean; mastercard: boolean; rupay: boolean; visa: boolean };
  card_type: { debit: boolean; credit: boolean; prepaid: boolean };
  card_subtype: { business: boolean; consumer: boolean; premium: boolean };
  upi: {
    intent: boolean;
    collect: boolean;
    payer_account_type: { bank_account: boolean; credit_card: boolean };
  };
  netbanking: Record<string, string>;
  wallet: Record<string, string>;
}

/** Kosh takes net banking and wallets today; cards and UPI stay false until it can take them. */
export function emptyMethods(): MethodsConfig {
  return {
    card_networks: { diners: false, amex: false, mastercard: false, rupay: false, visa: false },
    card_type: { debit: false, credit: false, prepaid: false },
    card_subtype: { business: false, consumer: false, premium: false },
    upi: { intent: false, collect: false, payer_account_type: { bank_account: false, credit_card: false } },
    netbanking: {},
    wallet: {},
  };
}

/**
 * Every bank and wallet of the Kosh catalogue (the sandbox's banks and wallets, which the
 * connectors map to their providers' codes): what a new account gets in test mode, and what a live
 * merchant whose partner never chose its live methods is offered as far as its connector takes it.
 */
export function catalogueMethods(): MethodsConfig {
  return {
    ...emptyMethods(),
    netbanking: Object.fromEntries(SANDBOX_BANKS.map((bank) => [bank.code, bank.label])),
    wallet: Object.fromEntries(SANDBOX_WALLETS.map((wallet) => [wallet.code, wallet.label])),
  };
}

/**
 * What a live merchant can offer: the banks and wallets both enabled for it and taken by the
 * connector its live payments go to (all that is enabled when the connector does not say; none
 * without a connector).
 */
export function offerable(
  config: MethodsConfig,
  connector: { methods?: { netbanking: readonly string[]; wallet: readonly string[] } } | undefined,
): MethodsConfig {
  if (connector && !connector.methods) return config;
  const keep = (enabled: Record<string, string>, taken: readonly string[] | undefined) =>
    Object.fromEntries(Object.entries(enabled).filter(([code]) => taken?.includes(code) ?? false));
  return {
    ...config,
    netbanking: keep(config.netbanking, connector?.methods?.netbanking),
    wallet: keep(config.wallet, connector?.methods?.wallet),
  };
}
