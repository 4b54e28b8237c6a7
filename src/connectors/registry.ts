import type { ProviderSettings } from '../config.js';
import { createCashfreeConnector } from './cashfree/cashfree.connector.js';
import { CASHFREE_BANKS, CASHFREE_UPI, CASHFREE_WALLETS } from './cashfree/cashfree.tables.js';
import type { Connector } from './connector.js';
import { createRazorpayConnector } from './razorpay/razorpay.connector.js';
import { RAZORPAY_BANKS, RAZORPAY_UPI, RAZORPAY_WALLETS } from './razorpay/razorpay.tables.js';

/**
 * The payment providers a merchant can bring its own account of (docs/connectors.md): the
 * credential fields each takes (the public ones are shown back; the secret ones are stored
 * encrypted and shown only as their last four characters), the banks and wallets it takes, and
 * how its connector is made. Adding a provider is adding an entry here.
 */
export interface ProviderKind {
  /** The provider's name in sentences (the API's descriptions). */
  label: string;
  publicFields: readonly string[];
  secretFields: readonly string[];
  /** The Kosh bank and wallet codes its connector takes (the connector's `methods`, from its tables). */
  methods: {
    netbanking: readonly string[];
    wallet: readonly string[];
    upi: { intent: boolean; collect: boolean };
  };
  create(credentials: Record<string, string>, settings: ProviderSettings): Connector;
}

export const PROVIDERS = {
  cashfree: {
    label: 'Cashfree',
    publicFields: ['client_id'],
    // Cashfree signs its webhooks with the client secret.
    secretFields: ['client_secret'],
    methods: {
      netbanking: Object.keys(CASHFREE_BANKS),
      wallet: Object.keys(CASHFREE_WALLETS),
      upi: CASHFREE_UPI,
    },
    create: (credentials, settings) =>
      createCashfreeConnector({
        baseUrl: settings.cashfreeBaseUrl,
        credentials: {
          client_id: String(credentials.client_id),
          client_secret: String(credentials.client_secret),
        },
        timeoutMs: settings.timeoutMs,
        orderExpirySeconds: settings.lateWindowSeconds,
      }),
  },
  razorpay: {
    label: 'Razorpay',
    publicFields: ['key_id'],
    secretFields: ['key_secret', 'webhook_secret'],
    methods: {
      netbanking: RAZORPAY_BANKS,
      wallet: Object.keys(RAZORPAY_WALLETS),
      upi: RAZORPAY_UPI,
    },
    create: (credentials, settings) =>
      createRazorpayConnector({
        baseUrl: settings.razorpayBaseUrl,
        credentials: {
          key_id: String(credentials.key_id),
          key_secret: String(credentials.key_secret),
          webhook_secret: String(credentials.webhook_secret),
        },
        timeoutMs: settings.timeoutMs,
        autoCaptureMinutes: Math.floor(settings.lateWindowSeconds / 60),
      }),
  },
} as const satisfies Record<string, ProviderKind>;

/** The providers' names: the connector-accounts API's enum and its types are derived from these. */
export type ProviderName = keyof typeof PROVIDERS;
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as ProviderName[];

export function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}
