import type { ProviderName } from '../../../src/connectors/registry.js';

// What the shared provider suites (suite.ts, upi-suite.ts) need of a local fake provider.

export type Fault = 'timeout' | 'bad_gateway_html' | 'garbage' | 'reset';
/**
 * The provider's calls a fault can hit: `initiate` makes the provider's order for a payment (Kosh's
 * S2S call), `pay` makes a payment attempt on that order (its answer says where the bank page is),
 * `status` asks about a payment, `refund` makes a refund.
 */
export type Phase = 'initiate' | 'pay' | 'status' | 'refund';
/** The phases a test may leave a fault on. */
export const PHASES: readonly Phase[] = ['initiate', 'pay', 'status', 'refund'];

/** What the shared suite needs of a local fake provider. */
export interface ProviderUnderTest {
  name: ProviderName;
  /** The settings that point Kosh at the fake (its base URL), once it runs. */
  env(): Record<string, string>;
  credentials: Record<string, string>;
  /** A bank and a wallet the fake and the connector both take. */
  bank: string;
  wallet: string;
  /** The Kosh error code a bank's decline on the fake maps to. */
  declineCode: string;
  setWebhookUrl(url: string): void;
  setWebhookTiming(timing: 'after' | 'before' | 'instead' | 'none'): void;
  /** Makes the fake's endpoint(s) of a phase misbehave after acting, or behave again (undefined). */
  setFault(phase: Phase, fault: Fault | undefined): void;
  /** Whether a new refund is final at once or stays pending until `settleRefunds`. */
  setRefundOutcome(outcome: 'processed' | 'pending'): void;
  settleRefunds(): void;
  /** An offer at the provider: each attempt takes this many paise less than its order (0: none). */
  setOffer(paise: number): void;
  /** How many refunds the fake made for a Kosh refund id. */
  refundsMadeFor(refundId: string): number;
  /** How many orders the provider holds for a Kosh payment. */
  ordersFor(paymentId: string): number;
  /** The provider's payment attempts on those orders, and whether each took the money. */
  attemptsFor(paymentId: string): { captured: boolean }[];
  /** Sends the provider's signed webhook about the refund it made for this Kosh refund. */
  sendRefundWebhook(refundId: string): Promise<number | undefined>;
  /** Sends the provider's webhook for this Kosh payment again, with a signature that is wrong. */
  sendForgedWebhook(paymentId: string): Promise<number | undefined>;
  close(): Promise<void>;
}
