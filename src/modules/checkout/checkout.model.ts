import type { UpiFlow } from '../../domain/payment-methods.js';
import type { Mode } from '../../domain/scope.js';

/** What a hosted checkout session can offer, in the order the page shows them. */
export const CHECKOUT_METHODS = ['upi', 'netbanking', 'wallet'] as const;
export type CheckoutMethod = (typeof CHECKOUT_METHODS)[number];

export const CHECKOUT_SESSION_STATUSES = ['open', 'completed', 'expired'] as const;
export type CheckoutSessionStatus = (typeof CHECKOUT_SESSION_STATUSES)[number];

/** How long a session stays open, in minutes, and the default. */
export const CHECKOUT_EXPIRY_MINUTES = { min: 5, max: 1440, default: 30 } as const;

export interface CheckoutCustomer {
  name: string;
  email: string;
  contact: string;
}

/** What creating a session takes (the API's body; its schema bounds the lengths). */
export interface CreateCheckoutSession {
  order_id: string;
  return_url: string;
  customer?: CheckoutCustomer;
  methods?: CheckoutMethod[];
  expires_in_minutes?: number;
}

/** The session as the API and the event payloads show it. */
export interface CheckoutSession {
  id: string;
  entity: 'checkout_session';
  order_id: string;
  /** `{public URL}/checkout/<id>/`: the customer's page. */
  url: string;
  status: CheckoutSessionStatus;
  /** The captured payment, once the order is paid. */
  payment_id: string | null;
  /** Unix seconds, as `created_at`. */
  expires_at: number;
  created_at: number;
}

/**
 * What the customer chose on the page: a method the session allows and its instrument, with their
 * own details when the merchant gave none.
 */
export type PaymentChoice = (
  | { method: 'upi'; upi: { flow: UpiFlow; vpa?: string; expiry_minutes?: number } }
  | { method: 'netbanking'; bank: string }
  | { method: 'wallet'; wallet: string }
) &
  Partial<CheckoutCustomer>;

/** A checkout_sessions row as the checkout repository reads it. */
export interface CheckoutSessionRow {
  id: string;
  account_id: string;
  mode: Mode;
  order_id: string;
  return_url: string;
  customer: CheckoutCustomer | null;
  methods: CheckoutMethod[];
  status: CheckoutSessionStatus;
  payment_id: string | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}
