import { KoshError } from '../../domain/errors.js';
import type { Mode } from '../../domain/scope.js';
import type { CreatePayment } from './payments.model.js';

const CONTACT = /^\+?[0-9]{8,15}$/;
// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is the merchant's concern.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function invalid(field: string, message: string): KoshError {
  return new KoshError('invalid_field', message, field);
}

/** The rules a schema cannot say well, each with its own message. Throws on the first violation. */
export function checkPaymentFields(input: CreatePayment, mode: Mode): void {
  if (!/^[A-Z]{3}$/.test(input.currency)) {
    throw invalid('currency', "currency must be a three-letter upper-case code such as 'INR'.");
  }
  if (!CONTACT.test(input.contact)) {
    throw invalid(
      'contact',
      "contact must be a phone number with country code: digits with an optional leading '+', 8 to 15 digits (e.g. +919876543210).",
    );
  }
  if (!EMAIL.test(input.email))
    throw invalid('email', 'email must be an email address such as a@example.com.');
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100 || CONTROL.test(input.name)) {
    throw invalid('name', 'name must be 1 to 100 characters without control characters.');
  }
  if (input.description !== undefined && CONTROL.test(input.description.replace(/[\n\t]/g, ''))) {
    throw invalid('description', 'description must not contain control characters.');
  }
  if (!/^[a-z0-9_]+$/.test(input.order_id))
    throw invalid('order_id', 'order_id must be an order id (order_…).');
  if (input.method === 'netbanking') {
    if (input.wallet !== undefined) throw invalid('wallet', "wallet is not used with method 'netbanking'.");
    if (input.bank === undefined) {
      throw new KoshError('missing_field', "The field 'bank' is required with method 'netbanking'.", 'bank');
    }
  } else {
    if (input.bank !== undefined) throw invalid('bank', "bank is not used with method 'wallet'.");
    if (input.wallet === undefined) {
      throw new KoshError('missing_field', "The field 'wallet' is required with method 'wallet'.", 'wallet');
    }
  }
  checkReturnUrl(input.return_url, mode);
}

/** Absolute https; in test mode also http on the local machine (a merchant developing locally). */
export function checkReturnUrl(raw: string, mode: Mode): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new KoshError('invalid_return_url', 'return_url must be an absolute URL.', 'return_url');
  }
  if (url.username || url.password) {
    throw new KoshError('invalid_return_url', 'return_url must not carry credentials.', 'return_url');
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && mode === 'test' && LOOPBACK_HOSTS.has(url.hostname)) return url;
  throw new KoshError(
    'invalid_return_url',
    mode === 'test'
      ? 'return_url must be an https URL (http is allowed only on localhost, 127.0.0.1 and [::1] in test mode).'
      : 'return_url must be an https URL.',
    'return_url',
  );
}

/** The canonical key of the account's methods matching `code` in any case, or undefined. */
export function canonicalKey(keys: Record<string, string>, code: string): string | undefined {
  if (Object.hasOwn(keys, code)) return code;
  const wanted = code.toLowerCase();
  return Object.keys(keys).find((key) => key.toLowerCase() === wanted);
}
