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

/** Nothing enabled; cards stay false until Kosh can take them. */
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
    // UPI intent and QR; collect only where an account has it (NPCI retired it for most merchants).
    upi: upiMethods(true, false),
    netbanking: Object.fromEntries(SANDBOX_BANKS.map((bank) => [bank.code, bank.label])),
    wallet: Object.fromEntries(SANDBOX_WALLETS.map((wallet) => [wallet.code, wallet.label])),
  };
}

/** The methods object's `upi`: bank accounts pay by UPI whenever any flow is on. */
export function upiMethods(intent: boolean, collect: boolean): MethodsConfig['upi'] {
  return { intent, collect, payer_account_type: { bank_account: intent || collect, credit_card: false } };
}

/** The UPI flow a payment asks for, by the methods flag that enables it (`intent` covers QR). */
export function upiEnabled(config: MethodsConfig, flow: 'intent' | 'qr' | 'collect'): boolean {
  return flow === 'collect' ? config.upi.collect : config.upi.intent;
}

/**
 * What a live merchant can offer: the banks and wallets both enabled for it and taken by the
 * connector its live payments go to (all that is enabled when the connector does not say; none
 * without a connector).
 */
export function offerable(
  config: MethodsConfig,
  connector:
    | {
        methods?: {
          netbanking: readonly string[];
          wallet: readonly string[];
          upi: { intent: boolean; collect: boolean };
        };
      }
    | undefined,
): MethodsConfig {
  if (connector && !connector.methods) return config;
  const taken = connector?.methods;
  const keep = (enabled: Record<string, string>, codes: readonly string[] | undefined) =>
    Object.fromEntries(Object.entries(enabled).filter(([code]) => codes?.includes(code) ?? false));
  return {
    ...config,
    upi: upiMethods(
      config.upi.intent && (taken?.upi.intent ?? false),
      config.upi.collect && (taken?.upi.collect ?? false),
    ),
    netbanking: keep(config.netbanking, taken?.netbanking),
    wallet: keep(config.wallet, taken?.wallet),
  };
}
