import { escapeHtml } from '../payments/html.js';

/** Markup that is already safe: built by `html` from escaped values, never from raw input. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

function render(value: unknown): string {
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * A template tag for dashboard markup: every interpolated value is escaped unless it is itself
 * `Html` (or an array of it), so a page cannot forget to escape a merchant's or a customer's text.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** An amount in the currency's smallest unit, written as people read it (₹1,234.50). */
export function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-IN', { style: 'currency', currency }).format(amount / 100);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}

/** Unix seconds as a UTC date and time. */
export function when(seconds: number | null): string {
  if (seconds === null) return '—';
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
