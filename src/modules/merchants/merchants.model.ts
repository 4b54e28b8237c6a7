import type { Mode } from '../../domain/scope.js';
import type { BusinessType } from './kyc-formats.js';
import type { BankAccountRow, ProfileRow } from './merchants.repo.js';
import type { Requirements } from './requirements.js';

/** Where a merchant is in onboarding (the status of its account). */
export type MerchantStatus = ProfileRow['status'];

/**
 * The registered address; only India for now. A type, not an interface: it is stored as a
 * `Record<string, string>` and an interface has no index signature.
 */
export type Address = {
  line1: string;
  line2?: string;
  city: string;
  state: string;
  /** Six-digit PIN code. */
  postal_code: string;
  country: 'IN';
};

/** What onboarding a merchant takes (the API's body; its schema checks the formats). */
export interface CreateMerchant {
  /** As registered (on the PAN). */
  legal_name: string;
  /** What customers see on payment pages; also the account name. */
  display_name: string;
  email: string;
  contact: string;
  business_type: BusinessType;
  business_category: string;
  business_subcategory: string;
  /** An https URL. */
  website?: string;
  address: Address;
  pan: string;
  /** Required for private and public limited companies and LLPs. */
  gstin?: string;
}

/** The bank account the merchant is settled to, as given (the number in full). */
export interface BankDetails {
  account_number: string;
  ifsc: string;
  beneficiary_name: string;
  account_type: BankAccountRow['account_type'];
}

/** Banks (`netbanking`) and wallets to enable (true) or disable (false), by code. */
export interface MethodToggles {
  netbanking?: Record<string, boolean>;
  wallet?: Record<string, boolean>;
  /** `intent` covers intent links and QR; `collect` only where NPCI still allows it. */
  upi?: { intent?: boolean; collect?: boolean };
}

/** The bank account as any answer or event shows it: the number masked to its last four digits. */
export interface BankAccount {
  account_number: string;
  last4: string;
  ifsc: string;
  bank_name: string;
  beneficiary_name: string;
  account_type: BankAccountRow['account_type'];
  status: BankAccountRow['status'];
  failure_reason: string | null;
}

/** The merchant as the API, the dashboard and the event payloads show it. */
export interface Merchant {
  id: string;
  entity: 'merchant';
  status: MerchantStatus;
  mode: Mode;
  legal_name: string;
  display_name: string;
  email: string;
  contact: string;
  business_type: string;
  business_category: string;
  business_subcategory: string;
  website: string | null;
  address: Record<string, string>;
  pan: string;
  gstin: string | null;
  bank_account: BankAccount | null;
  requirements: Requirements;
  /** Unix seconds, as `created_at`. */
  activated_at: number | null;
  created_at: number;
}
