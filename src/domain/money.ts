import { KoshError } from './errors.js';

export interface Currency {
  code: string;
  /** Digits after the decimal point: INR 2 (paise). */
  exponent: number;
  /** Default bounds in sub-units; overridable through configuration. */
  minAmount: number;
  maxAmount: number;
}

/** Enabled currencies. Adding one is one line here. */
export const CURRENCIES: Record<string, Currency> = {
  INR: { code: 'INR', exponent: 2, minAmount: 100, maxAmount: 10_000_000_000 },
};

export type AmountLimits = Record<string, { minAmount: number; maxAmount: number }>;

export function checkAmount(amount: number, currencyCode: string, limits: AmountLimits): Currency {
  const currency = CURRENCIES[currencyCode];
  if (!currency) {
    throw new KoshError(
      'currency_not_supported',
      `currency '${currencyCode}' is not supported; supported: ${Object.keys(CURRENCIES).join(', ')}.`,
      'currency',
    );
  }
  const bounds = limits[currency.code] ?? currency;
  if (amount < bounds.minAmount || amount > bounds.maxAmount) {
    throw new KoshError(
      'amount_out_of_range',
      `amount must be between ${bounds.minAmount} and ${bounds.maxAmount} ${currency.code} sub-units.`,
      'amount',
    );
  }
  return currency;
}

/** 5000 INR sub-units → "50.00". */
export function formatMajor(amount: number, currencyCode: string): string {
  const exponent = CURRENCIES[currencyCode]?.exponent ?? 2;
  const divisor = 10 ** exponent;
  const major = Math.floor(amount / divisor);
  const minor = String(amount % divisor).padStart(exponent, '0');
  return exponent === 0 ? String(major) : `${major.toLocaleString('en-IN')}.${minor}`;
}
