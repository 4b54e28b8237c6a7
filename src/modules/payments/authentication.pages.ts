import { escapeHtml } from '../../pages/html.js';
import type { AuthenticationView } from './authentication.service.js';
import {
  amountText,
  bankDocument,
  hiddenInputs,
  type Page,
  PENDING_OUTCOMES,
  type SandboxChoiceText,
} from './html.js';
import { renderUpiPage } from './upi.pages.js';

export type { Page };

/**
 * The sandbox page's outcomes beyond the plain three, in the customer's words: what the simulated
 * bank will do, so that a developer knows which path of their integration each one walks.
 */
const BANK_OUTCOMES: readonly SandboxChoiceText[] = [
  ...PENDING_OUTCOMES,
  {
    choice: 'late_success',
    label: 'Late success',
    says: 'The bank does not answer in time, so the payment fails; the bank confirms it afterwards (a late authorisation).',
  },
];

/** Every value from a merchant or customer is escaped; nothing here trusts its input. */
export function renderAuthenticationPage(view: AuthenticationView, nonce: string, selfUrl: string): Page {
  const { payment } = view;
  if (
    view.kind === 'upi' ||
    view.kind === 'simulator' ||
    view.kind === 'simulated' ||
    view.kind === 'outcome'
  )
    return renderUpiPage(view, nonce, selfUrl);
  if (view.kind === 'checkout') {
    return { status: 303, html: '', formTargets: [], redirect: view.url, redirectStatus: 303 };
  }
  if (view.kind === 'choose') {
    const kind = payment.method === 'netbanking' ? 'Bank' : 'Wallet';
    const button = (choice: string, label: string) =>
      `<button type="submit" name="choice" value="${choice}" class="${choice}">${label}</button>`;
    const outcomes = BANK_OUTCOMES.map(
      (outcome) =>
        `<li>${button(outcome.choice, outcome.label)}<span class="says">${outcome.says}</span></li>`,
    ).join('\n      ');
    const body = `<main>
  <h1>${escapeHtml(payment.instrument_name)} — sandbox ${kind.toLowerCase()}</h1>
  <p class="note">Test mode: no money moves. Choose the outcome of this payment.</p>
  <dl>
    <dt>Merchant</dt><dd id="merchant">${escapeHtml(view.merchantName)}</dd>
    <dt>Amount</dt><dd id="amount">${escapeHtml(amountText(payment.amount, payment.currency))}</dd>
    <dt>${kind}</dt><dd id="instrument">${escapeHtml(payment.instrument_name)}</dd>
    <dt>Payment</dt><dd>${escapeHtml(payment.id)}</dd>
  </dl>
  <form method="POST" action="${escapeHtml(selfUrl)}">
    ${hiddenInputs({ token: view.token })}
    <div class="choices">${button('success', 'Success')}${button('failure', 'Failure')}${button('cancel', 'Cancel')}</div>
    <h2>What real banks also do</h2>
    <ul class="outcomes">
      ${outcomes}
    </ul>
  </form>
</main>`;
    return {
      status: 200,
      html: bankDocument({ title: `${payment.instrument_name} (sandbox)`, nonce, body }),
      formTargets: [],
    };
  }
  if (view.kind === 'provider') {
    const { next } = view;
    if (next.kind === 'redirect') return { status: 302, html: '', formTargets: [], redirect: next.url };
    const body = `<main>
  <h1>Taking you to your ${payment.method === 'netbanking' ? 'bank' : 'wallet'}…</h1>
  <form id="kosh-provider" method="POST" action="${escapeHtml(next.url)}">
    ${hiddenInputs(next.fields)}
    <noscript><button type="submit">Continue to ${escapeHtml(payment.instrument_name)}</button></noscript>
  </form>
</main>`;
    return {
      status: 200,
      html: bankDocument({
        title: `${payment.instrument_name}`,
        nonce,
        body,
        script: "document.getElementById('kosh-provider').submit();",
      }),
      formTargets: [new URL(next.url).protocol],
    };
  }
  if (view.kind === 'unavailable') {
    const body = `<main>
  <h1>Your ${payment.method === 'netbanking' ? 'bank' : 'wallet'} cannot be reached right now</h1>
  <p>Nothing was charged by this attempt. <a href="${escapeHtml(selfUrl)}">Try again</a> in a moment.</p>
</main>`;
    return { status: 503, html: bankDocument({ title: 'Bank unavailable', nonce, body }), formTargets: [] };
  }
  if (view.kind === 'stale') {
    const body = `<main>
  <h1>This page is no longer valid</h1>
  <p>The payment is still waiting for you. <a href="${escapeHtml(selfUrl)}">Open the bank page again</a>.</p>
</main>`;
    return { status: 409, html: bankDocument({ title: 'Page expired', nonce, body }), formTargets: [] };
  }
  const returning = view.payment;
  const fields = {
    payment_id: payment.id,
    order_id: payment.order_id,
    status: payment.status,
    signature: view.signature,
  };
  const body = `<main>
  <h1>Returning to the merchant…</h1>
  <form id="kosh-return" method="POST" action="${escapeHtml(returning.return_url)}">
    ${hiddenInputs(fields)}
    <noscript><button type="submit">Continue to the merchant</button></noscript>
  </form>
</main>`;
  return {
    status: 200,
    html: bankDocument({
      title: 'Returning to the merchant',
      nonce,
      body,
      script: "document.getElementById('kosh-return').submit();",
    }),
    formTargets: [new URL(returning.return_url).protocol],
  };
}

export function renderErrorPage(status: number, message: string, nonce: string): Page {
  const body = `<main><h1>Payment page unavailable</h1><p>${escapeHtml(message)}</p></main>`;
  return { status, html: bankDocument({ title: 'Payment page unavailable', nonce, body }), formTargets: [] };
}
