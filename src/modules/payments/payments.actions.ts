import { unixSeconds } from '../../domain/clock.js';
import type { PaymentMethod, UpiFlow } from '../../domain/payment-methods.js';
import { qrDataUrl } from '../../pages/qr.js';
import { escapeHtml, hiddenInputs } from './html.js';
import type { Action } from './payments.model.js';

/** `{publicUrl}/v1/payments/<id>/authentication/`; the public address comes from configuration, never a request. */
export function authenticationUrl(publicUrl: string, paymentId: string): string {
  return `${publicUrl}/v1/payments/${encodeURIComponent(paymentId)}/authentication/`;
}

/** `{publicUrl}/checkout/<id>/`: a hosted checkout session's page (docs/checkout.md). */
export function checkoutPageUrl(publicUrl: string, sessionId: string): string {
  return `${publicUrl}/checkout/${encodeURIComponent(sessionId)}/`;
}

/** `{publicUrl}/v1/payments/<id>/upi-simulator/`: the sandbox UPI app (test mode). */
export function upiSimulatorUrl(publicUrl: string, paymentId: string): string {
  return `${publicUrl}/v1/payments/${encodeURIComponent(paymentId)}/upi-simulator/`;
}

/** Where an html_form sends the browser: Kosh's authentication URL by GET, with the instrument's fields. */
export function htmlFormStep(
  payment: { id: string; method: PaymentMethod; code: string },
  publicUrl: string,
): { url: string; fields: Record<string, string> } {
  return {
    url: authenticationUrl(publicUrl, payment.id),
    fields:
      payment.method === 'netbanking'
        ? { paymentMode: 'NET_BANKING', bankCode: payment.code }
        : { paymentMode: 'WALLET', walletCode: payment.code },
  };
}

/**
 * The `next[0]` of seed §2.2 and §4.4. The html_form document is rendered by the merchant on its own
 * site, so it carries no nonce: a plain inline script submits the form by GET after 1000 ms, and a
 * button inside <noscript> is the fallback. A merchant page whose Content-Security-Policy refuses
 * inline scripts runs neither (scripting is on), so a plain link to the same address follows: the
 * customer is never left on "Taking you to your bank…" with nothing to press.
 */
export function buildAction(
  action: 'html_form' | 'redirect',
  payment: { id: string; method: PaymentMethod; code: string },
  publicUrl: string,
): Action {
  if (action === 'redirect') return { action: 'redirect', url: authenticationUrl(publicUrl, payment.id) };
  const { url, fields } = htmlFormStep(payment, publicUrl);
  const where = payment.method === 'netbanking' ? 'bank' : 'wallet';
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Redirecting to your ${where}…</title>
</head>
<body>
  <p>Taking you to your ${where}…</p>
  <form id="kosh-authentication" method="GET" action="${escapeHtml(url)}">
    ${hiddenInputs(fields)}
    <noscript><button type="submit">Continue</button></noscript>
  </form>
  <p><a id="kosh-continue" href="${escapeHtml(`${url}?${new URLSearchParams(fields).toString()}`)}">Not moving? Continue to your ${where}</a></p>
  <script>setTimeout(function () { document.getElementById('kosh-authentication').submit(); }, 1000);</script>
</body>
</html>
`;
  return { action: 'html_form', html_content: html };
}

/**
 * A UPI payment's `next` (docs/payments.md, "UPI"): how the merchant shows it (`upi_intent`,
 * `upi_qr` with the QR of the link, `upi_collect`), then always the redirect to Kosh's own UPI page.
 * Without the provider's link (its answer to the start was lost, or it refused) there is only the
 * redirect: Kosh's page starts the payment again, or shows the outcome.
 */
export function buildUpiActions(
  payment: { id: string; flow: UpiFlow; link: string | null; expiresAt: Date; started: boolean },
  publicUrl: string,
): Action[] {
  const page: Action = { action: 'redirect', url: authenticationUrl(publicUrl, payment.id) };
  const expires_at = unixSeconds(payment.expiresAt);
  if (!payment.started) return [page];
  if (payment.flow === 'collect') return [{ action: 'upi_collect', expires_at }, page];
  if (payment.link === null) return [page];
  if (payment.flow === 'intent') return [{ action: 'upi_intent', url: payment.link, expires_at }, page];
  return [{ action: 'upi_qr', url: payment.link, qr_image: qrDataUrl(payment.link), expires_at }, page];
}
