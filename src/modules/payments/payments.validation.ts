import { isVpa } from '../../connectors/upi.js';
import { KoshError } from '../../domain/errors.js';
import type { Mode } from '../../domain/scope.js';
import { asciiLowerCase } from '../../domain/text.js';
import { literalAddress, readWrittenUrl } from '../../domain/urls.js';
import type { CreatePayment } from './payments.model.js';

const CONTACT = /^\+?[0-9]{8,15}$/;
// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is the merchant's concern.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A host name as DNS writes one (labels of letters, digits, hyphens and underscores), at most 253 characters. */
const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

function invalid(field: string, message: string): KoshError {
  return new KoshError('invalid_field', message, field);
}

/** The rules a schema cannot say well, each with its own message. Throws on the first violation. */
export function checkPaymentFields(input: CreatePayment, mode: Mode): void {
  if (!/^[A-Z]{3}$/.test(input.currency)) {
    throw invalid('currency', "currency must be a three-letter upper-case code such as 'INR'.");
  }
  checkCustomer(input);
  if (input.description !== undefined && CONTROL.test(input.description.replace(/[\n\t]/g, ''))) {
    throw invalid('description', 'description must not contain control characters.');
  }
  if (!/^[a-z0-9_]+$/.test(input.order_id))
    throw invalid('order_id', 'order_id must be an order id (order_…).');
  const unused = (field: 'bank' | 'wallet' | 'upi') => {
    if (input[field] !== undefined)
      throw invalid(field, `${field} is not used with method '${input.method}'.`);
  };
  const required = (field: string) =>
    new KoshError('missing_field', `The field '${field}' is required with method '${input.method}'.`, field);
  if (input.method === 'netbanking') {
    unused('wallet');
    unused('upi');
    if (input.bank === undefined) throw required('bank');
  } else if (input.method === 'wallet') {
    unused('bank');
    unused('upi');
    if (input.wallet === undefined) throw required('wallet');
  } else {
    unused('bank');
    unused('wallet');
    checkUpi(input, required);
  }
  if (input.return_url !== undefined) checkReturnUrl(input.return_url, mode);
  else if (input.method !== 'upi') throw required('return_url');
}

/**
 * The customer's contact, email and name, as a payment takes them; `prefix` names the fields where
 * they sit inside another object (`customer.` of a checkout session).
 */
export function checkCustomer(customer: { name: string; email: string; contact: string }, prefix = ''): void {
  if (!CONTACT.test(customer.contact)) {
    throw invalid(
      `${prefix}contact`,
      `${prefix}contact must be a phone number with country code: digits with an optional leading '+', 8 to 15 digits (e.g. +919876543210).`,
    );
  }
  if (!EMAIL.test(customer.email))
    throw invalid(`${prefix}email`, `${prefix}email must be an email address such as a@example.com.`);
  const name = customer.name.trim();
  if (name.length < 1 || name.length > 100 || CONTROL.test(customer.name)) {
    throw invalid(`${prefix}name`, `${prefix}name must be 1 to 100 characters without control characters.`);
  }
}

/** The bounds of `upi.expiry_minutes`, and its default. */
export const UPI_EXPIRY_MINUTES = { min: 5, max: 60, default: 10 } as const;

function checkUpi(input: CreatePayment, required: (field: string) => KoshError): void {
  const upi = input.upi;
  if (upi === undefined) throw required('upi');
  if (input.currency !== 'INR') throw invalid('currency', "UPI takes only currency 'INR'.");
  if (upi.flow === 'collect') {
    if (upi.vpa === undefined) throw required('upi.vpa');
  } else if (upi.vpa !== undefined) {
    throw invalid('upi.vpa', `upi.vpa is used only with flow 'collect', not '${upi.flow}'.`);
  }
  if (upi.vpa !== undefined && !isVpa(upi.vpa)) {
    throw new KoshError(
      'invalid_vpa',
      'upi.vpa must be a UPI id of the form name@handle, 3 to 100 characters (e.g. asha@okhdfcbank).',
      'upi.vpa',
    );
  }
  const minutes = upi.expiry_minutes;
  if (minutes !== undefined && (minutes < UPI_EXPIRY_MINUTES.min || minutes > UPI_EXPIRY_MINUTES.max)) {
    throw invalid(
      'upi.expiry_minutes',
      `upi.expiry_minutes must be a whole number of minutes from ${UPI_EXPIRY_MINUTES.min} to ${UPI_EXPIRY_MINUTES.max}.`,
    );
  }
}

/**
 * Absolute https; in test mode also http on the local machine (a merchant developing locally).
 * The text must already be the URL a browser reads (`readWrittenUrl`): it is stored and used as
 * sent, in the return page's form, its Content-Security-Policy and the return POST alike.
 */
export function checkReturnUrl(raw: string, mode: Mode): URL {
  const refused = (message: string) => new KoshError('invalid_return_url', message, 'return_url');
  const { url, problem } = readWrittenUrl(raw);
  if (problem !== undefined) throw refused(`return_url ${problem}.`);
  if (url.username || url.password) throw refused('return_url must not carry credentials.');
  // The host goes into the return page's Content-Security-Policy as written: a name a DNS lookup
  // can take (`;`, `,`, `*` or a quote there would change the policy), or an IP address.
  if (!HOST_NAME.test(url.hostname) && !literalAddress(url.hostname)) {
    throw refused(
      `return_url must have a host name of letters, digits, hyphens and dots (or an IP address), not ${url.hostname}.`,
    );
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && mode === 'test' && LOOPBACK_HOSTS.has(url.hostname)) return url;
  throw refused(
    mode === 'test'
      ? 'return_url must be an https URL (http is allowed only on localhost, 127.0.0.1 and [::1] in test mode).'
      : 'return_url must be an https URL.',
  );
}

/** The canonical key of the account's methods matching `code` in any case, or undefined. */
export function canonicalKey(keys: Record<string, string>, code: string): string | undefined {
  if (Object.hasOwn(keys, code)) return code;
  const wanted = asciiLowerCase(code);
  return Object.keys(keys).find((key) => asciiLowerCase(key) === wanted);
}
