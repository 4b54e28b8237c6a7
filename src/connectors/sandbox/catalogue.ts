/**
 * The sandbox's banks and wallets: the code a merchant submits, the label a customer sees, and the
 * action the simulated bank answers with. The seed fixes ICIC and AIRTELMONEY to `html_form`, HDFC
 * and PAYZAPP to `redirect`; every other entry's action is fixed here so test runs are repeatable.
 */
export type SandboxAction = 'html_form' | 'redirect';

export interface SandboxInstrument {
  code: string;
  label: string;
  action: SandboxAction;
}

export const SANDBOX_BANKS: readonly SandboxInstrument[] = [
  { code: 'ICIC', label: 'ICICI Bank', action: 'html_form' },
  { code: 'HDFC', label: 'HDFC Bank', action: 'redirect' },
  { code: 'SBIN', label: 'State Bank of India', action: 'html_form' },
  { code: 'UTIB', label: 'Axis Bank', action: 'redirect' },
  { code: 'KKBK', label: 'Kotak Mahindra Bank', action: 'html_form' },
  { code: 'PUNB_R', label: 'Punjab National Bank - Retail Banking', action: 'redirect' },
  { code: 'PUNB_C', label: 'Punjab National Bank - Corporate Banking', action: 'html_form' },
  { code: 'BARB_R', label: 'Bank of Baroda - Retail Banking', action: 'html_form' },
  { code: 'BARB_C', label: 'Bank of Baroda - Corporate Banking', action: 'redirect' },
  { code: 'YESB', label: 'Yes Bank', action: 'redirect' },
  { code: 'IDFB', label: 'IDFC FIRST Bank', action: 'html_form' },
  { code: 'INDB', label: 'IndusInd Bank', action: 'redirect' },
  { code: 'CNRB', label: 'Canara Bank', action: 'html_form' },
  { code: 'UBIN', label: 'Union Bank of India', action: 'redirect' },
  { code: 'FDRL', label: 'Federal Bank', action: 'html_form' },
  { code: 'IOBA', label: 'Indian Overseas Bank', action: 'redirect' },
  { code: 'BKID', label: 'Bank of India', action: 'html_form' },
  { code: 'MAHB', label: 'Bank of Maharashtra', action: 'redirect' },
  { code: 'RATN', label: 'RBL Bank', action: 'html_form' },
  { code: 'AUBL', label: 'AU Small Finance Bank', action: 'redirect' },
];

/** Wallet codes are lowercase in the methods object; payment requests may send any case. */
export const SANDBOX_WALLETS: readonly SandboxInstrument[] = [
  { code: 'airtelmoney', label: 'Airtel Payments Bank', action: 'html_form' },
  { code: 'payzapp', label: 'PayZapp', action: 'redirect' },
  { code: 'amazonpay', label: 'Amazon Pay', action: 'html_form' },
  { code: 'mobikwik', label: 'MobiKwik', action: 'redirect' },
  { code: 'freecharge', label: 'Freecharge', action: 'html_form' },
  { code: 'jiomoney', label: 'JioMoney', action: 'redirect' },
  { code: 'olamoney', label: 'Ola Money', action: 'html_form' },
  { code: 'phonepe', label: 'PhonePe Wallet', action: 'redirect' },
];
