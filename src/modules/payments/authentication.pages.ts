import { formatMajor } from '../../domain/money.js';
import type { AuthenticationView } from './authentication.service.js';
import { escapeHtml, hiddenInputs, htmlDocument } from './html.js';

export interface Page {
  status: number;
  html: string;
  /** Origins the page's form may post to, besides its own. */
  formTargets: string[];
}

function amountText(amount: string, currency: string): string {
  const major = formatMajor(Number(amount), currency);
  return currency === 'INR' ? `₹${major}` : `${major} ${currency}`;
}

/** Every value from a merchant or customer is escaped; nothing here trusts its input. */
export function renderAuthenticationPage(view: AuthenticationView, nonce: string, selfUrl: string): Page {
  const { payment } = view;
  if (view.kind === 'choose') {
    const kind = payment.method === 'netbanking' ? 'Bank' : 'Wallet';
    const button = (choice: string, label: string) =>
      `<button type="submit" name="choice" value="${choice}" class="${choice}">${label}</button>`;
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
  </form>
</main>`;
    return {
      status: 200,
      html: htmlDocument({ title: `${payment.instrument_name} (sandbox)`, nonce, body }),
      formTargets: [],
    };
  }
  if (view.kind === 'stale') {
    const body = `<main>
  <h1>This page is no longer valid</h1>
  <p>The payment is still waiting for you. <a href="${escapeHtml(selfUrl)}">Open the bank page again</a>.</p>
</main>`;
    return { status: 409, html: htmlDocument({ title: 'Page expired', nonce, body }), formTargets: [] };
  }
  const fields = {
    payment_id: payment.id,
    order_id: payment.order_id,
    status: payment.status,
    signature: view.signature,
  };
  const body = `<main>
  <h1>Returning to the merchant…</h1>
  <form id="kosh-return" method="POST" action="${escapeHtml(payment.return_url)}">
    ${hiddenInputs(fields)}
    <noscript><button type="submit">Continue to the merchant</button></noscript>
  </form>
</main>`;
  return {
    status: 200,
    html: htmlDocument({
      title: 'Returning to the merchant',
      nonce,
      body,
      script: "document.getElementById('kosh-return').submit();",
    }),
    formTargets: [new URL(payment.return_url).origin],
  };
}

export function renderErrorPage(status: number, message: string, nonce: string): Page {
  const body = `<main><h1>Payment page unavailable</h1><p>${escapeHtml(message)}</p></main>`;
  return { status, html: htmlDocument({ title: 'Payment page unavailable', nonce, body }), formTargets: [] };
}
