import { qrDataUrl } from '../../../src/pages/qr.js';

/**
 * UPI on the Cashfree fake, as Cashfree documents Order Pay for `payment_method.upi` (API version
 * 2023-08-01): `channel` `link` (answered with `data.payload` of UPI app links, `default` the plain
 * `upi://pay?…` one), `qrcode` (answered with `data.payload.qrcode`, a PNG data URL of that link) or
 * `collect` (with the customer's `upi_id`; answered with no link). Every answer has
 * `action: "custom"`. The attempt waits (`NOT_ATTEMPTED`) until the simulated customer approves
 * or declines it in their app; a decline is `FAILED` with `error_details` as Cashfree shows UPI
 * declines (`TRANSACTION_DECLINED`, reason `auth_declined`, source `customer`).
 *
 * What is the fake's own assumption (not in Cashfree's documentation): the payee VPA and name in
 * the link, the app links other than `default`, and that a link attempt's `upi_id` is the payer's
 * VPA once paid.
 */

/** The merchant VPA the fake's links pay (Cashfree's own handle in real links). */
export const CASHFREE_FAKE_PAYEE = { vpa: 'kosh.fake@cashfree', name: 'Kosh Fake Merchant' } as const;
/** The VPA the fake's simulated customer pays from (a link or QR attempt). */
export const CASHFREE_FAKE_PAYER_VPA = 'asha.rao@okfakebank';

export type CashfreeUpiChannel = 'link' | 'qrcode' | 'collect';

export interface FakeUpiMethod {
  upi: { channel: CashfreeUpiChannel; upi_id: string | null };
}

const VPA = /^[A-Za-z0-9._-]{2,256}@[A-Za-z][A-Za-z0-9.]{1,64}$/;

/** A UPI `payment_method` as Cashfree takes it; a string is the refusal's `code` and message. */
export function readUpiMethod(
  upi: Record<string, unknown>,
): FakeUpiMethod | { code: string; message: string } {
  const channel = upi.channel;
  if (channel !== 'link' && channel !== 'qrcode' && channel !== 'collect') {
    return {
      code: 'payment_method_invalid',
      message: 'payment_method.upi.channel : link, qrcode or collect',
    };
  }
  const minutes = upi.upi_expiry_minutes;
  if (minutes !== undefined && (typeof minutes !== 'number' || minutes < 5 || minutes > 15)) {
    return { code: 'upi_expiry_minutes_invalid', message: 'upi_expiry_minutes : between 5 and 15' };
  }
  if (channel !== 'collect') {
    if (upi.upi_id !== undefined && upi.upi_id !== null) {
      return { code: 'upi_id_invalid', message: 'upi_id : only for the collect channel' };
    }
    return { upi: { channel, upi_id: null } };
  }
  if (typeof upi.upi_id !== 'string' || !VPA.test(upi.upi_id)) {
    return { code: 'upi_id_invalid', message: 'Invalid UPI ID entered' };
  }
  return { upi: { channel, upi_id: upi.upi_id } };
}

/** Paise → UPI's `am`: rupees with two decimals. */
const am = (paise: number) => `${Math.trunc(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;

/** The intent link of an attempt, as a UPI app reads it: payee, reference, amount, currency. */
export function fakeUpiLink(cfPaymentId: string, amount: number): string {
  const query = new URLSearchParams({
    pa: CASHFREE_FAKE_PAYEE.vpa,
    pn: CASHFREE_FAKE_PAYEE.name,
    tr: cfPaymentId,
    am: am(amount),
    cu: 'INR',
    tn: `Payment ${cfPaymentId}`,
  });
  return `upi://pay?${query.toString().replace(/\+/g, '%20')}`;
}

/** Order Pay's `data` for a UPI attempt on each channel. */
export async function upiPayData(
  method: FakeUpiMethod,
  cfPaymentId: string,
  amount: number,
): Promise<Record<string, unknown>> {
  const none = { url: null, payload: null, content_type: null, method: null };
  const link = fakeUpiLink(cfPaymentId, amount);
  if (method.upi.channel === 'collect') return none;
  if (method.upi.channel === 'qrcode') return { ...none, payload: { qrcode: await qrDataUrl(link) } };
  const query = link.slice('upi://pay?'.length);
  return {
    ...none,
    payload: {
      default: link,
      bhim: `bhim://upi/pay?${query}`,
      gpay: `tez://upi/pay?${query}`,
      paytm: `paytmmp://pay?${query}`,
      phonepe: `phonepe://pay?${query}`,
    },
  };
}

/** The `error_details` of a UPI attempt the customer declined in their app. */
export const UPI_DECLINE = {
  error_code: 'TRANSACTION_DECLINED',
  error_description: 'issuer bank or payment service provider declined the transaction',
  error_reason: 'auth_declined',
  error_source: 'customer',
};

/** A 12-digit UPI RRN, as `bank_reference` carries it. */
export function fakeRrn(counter: number): string {
  return `${(Date.now() % 1_000_000) * 1_000_000 + (counter % 1_000_000)}`.padStart(12, '0').slice(-12);
}
