import { maskVpa } from '../../connectors/upi.js';
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

type UpiView = Extract<AuthenticationView, { kind: 'upi' | 'simulator' | 'simulated' | 'outcome' }>;

/**
 * The QR on a wide screen, the app button on a phone: CSS alone decides, so it works without script.
 * A touch screen gets the app button whatever its width (a phone held sideways, a tablet), beside
 * the QR when there is room for both.
 */
const UPI_STYLE = `.payee{color:#556;margin:-.5rem 0 1rem}
.sandbox{background:#fff6db;border:1px solid #e9d8a6;border-radius:.3rem;padding:.5rem .75rem;color:#4d3d00;font-size:.85rem}
.state{font-weight:600;display:flex;align-items:center;gap:.5rem}
.state::before{content:"";flex:none;width:.6rem;height:.6rem;border-radius:50%;background:#c77d00}
.qr{text-align:center;margin:1rem 0}.qr img{width:14rem;height:14rem;max-width:100%;padding:.5rem;
border:1px solid #d5d9e2;border-radius:.5rem;image-rendering:pixelated;background:#fff}.qr p{margin:.4rem 0 0}
.app{display:none;margin:1rem 0}.button{display:block;text-align:center;padding:.8rem;border-radius:.3rem;
background:#17703d;color:#fff;font-weight:600;text-decoration:none;font-size:1.05rem}
.timer{display:flex;justify-content:space-between;align-items:baseline;border-top:1px solid #e4e7ee;padding-top:.75rem}
.timer strong{font-size:1.2rem;font-variant-numeric:tabular-nums}
.expire{background:#e8ecf5;color:#1d2330}
@media (pointer:coarse){.app{display:block}}
@media (max-width:40rem){.qr{display:none}.app{display:block}}`;

/** The sandbox UPI app: Pay stands out, and on a phone each choice keeps its explanation close. */
const SIMULATOR_STYLE = `.outcomes button.success{background:#17703d;color:#fff;font-weight:600}
.vpa{display:block;font-weight:400;color:#556}.id{font-family:ui-monospace,monospace;font-size:.85rem}
@media (max-width:30rem){dl{grid-template-columns:1fr;gap:0}dd{margin-bottom:.5rem}
.outcomes{gap:1rem}.outcomes li{gap:.3rem}}`;

/**
 * Follows the payment without the customer doing anything: asks Kosh for its status every two
 * seconds and, once it is final, reloads the page (which then sends the browser back); counts down
 * to expires_at. Without script, a refresh every 5 seconds does the following.
 */
function followScript(statusUrl: string, selfUrl: string): string {
  return `(function(){var left=document.getElementById('remaining');var end=Number(left.getAttribute('data-end'));
var state=document.getElementById('state');
function tick(){var s=Math.max(0,Math.round((end-Date.now())/1000));left.textContent=Math.floor(s/60)+':'+String(s%60).padStart(2,'0');}
tick();setInterval(tick,1000);
function poll(){fetch(${JSON.stringify(statusUrl)},{cache:'no-store',credentials:'omit'}).then(function(r){return r.json();}).then(function(b){
if(b.final){location.replace(${JSON.stringify(selfUrl)});return;}
if(b.status==='pending'){state.textContent='Your bank is confirming the payment…';}
setTimeout(poll,2000);}).catch(function(){setTimeout(poll,4000);});}
setTimeout(poll,2000);})();`;
}

function remaining(expiresAt: Date, now: Date): string {
  const seconds = Math.max(0, Math.round((expiresAt.getTime() - now.getTime()) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

const CHOICES: readonly SandboxChoiceText[] = [
  { choice: 'success', label: 'Pay', says: 'The customer enters the UPI PIN; the bank confirms at once.' },
  { choice: 'failure', label: 'Decline', says: 'The bank declines the payment.' },
  { choice: 'cancel', label: 'Cancel', says: 'The customer cancels in the app.' },
  ...PENDING_OUTCOMES,
  {
    choice: 'late_success',
    label: 'Late success',
    says: 'The bank answers only after the payment expired (a late authorisation).',
  },
  {
    choice: 'expire',
    label: 'Let it expire',
    says: 'Nothing happens: at its expiry it fails (upi_expired).',
  },
];

const OUTCOME_TITLES: Record<string, string> = {
  captured: 'Payment successful',
  failed: 'Payment not completed',
  pending: 'Payment being confirmed',
  created: 'Payment waiting',
};

export function renderUpiPage(view: UpiView, nonce: string, selfUrl: string, now: Date = new Date()): Page {
  const { payment } = view;
  const amount = escapeHtml(amountText(payment.amount, payment.currency));
  if (view.kind === 'upi') {
    const expiresAt = payment.expires_at ?? now;
    const statusUrl = selfUrl.replace(/\/authentication\/$/, '/upi-status/');
    const merchant = escapeHtml(view.merchantName);
    const waiting =
      payment.status === 'pending' ? 'Your bank is confirming the payment…' : 'Waiting for your payment…';
    const sandboxNote = !view.sandbox
      ? ''
      : payment.upi_flow === 'collect'
        ? `<p class="sandbox">Test mode: no money moves. No real UPI app receives this request; answer it in Kosh’s sandbox UPI app.</p>`
        : `<p class="sandbox">Test mode: no money moves. The QR code and the button open Kosh’s sandbox UPI app; no real UPI app can pay this payment.</p>`;
    const pay =
      payment.upi_flow === 'collect'
        ? `<p>We sent a payment request to <strong>${escapeHtml(maskVpa(payment.upi_vpa ?? ''))}</strong>. Open your UPI app and approve it.</p>`
        : view.link === null
          ? ''
          : `<div class="qr">${
              view.qr
                ? `<img src="${escapeHtml(view.qr)}" alt="UPI QR code: pay ${amount} to ${merchant}">`
                : ''
            }<p>Scan the code with any UPI app on your phone.</p></div>
  <p class="app"><a class="button" id="open-app" href="${escapeHtml(view.link)}">Open UPI app</a></p>`;
    const simulator =
      view.sandbox && view.link === null
        ? `<p><a href="${escapeHtml(selfUrl.replace(/\/authentication\/$/, '/upi-simulator/'))}">Open the sandbox UPI app</a></p>`
        : view.sandbox
          ? `<p class="qr"><a href="${escapeHtml(view.link ?? '')}">Open the sandbox UPI app</a></p>`
          : '';
    const body = `<main>
  <h1>Pay ${amount} to ${merchant} with UPI</h1>
  ${sandboxNote}
  <p id="state" class="state" role="status" aria-live="polite">${waiting}</p>
  ${pay}
  ${simulator}
  <p class="timer"><span>Time left (until <time datetime="${expiresAt.toISOString()}">${indianTime(expiresAt)} IST</time>)</span>
    <strong id="remaining" data-end="${expiresAt.getTime()}">${remaining(expiresAt, now)}</strong></p>
  <p class="note">Keep this page open: it moves on by itself once your bank answers. Payment ${escapeHtml(payment.id)}.</p>
  ${view.checkoutUrl ? `<p><a href="${escapeHtml(view.checkoutUrl)}">Pay another way</a></p>` : ''}
</main>`;
    return {
      status: 200,
      html: bankDocument({
        title: `Pay ${amountText(payment.amount, payment.currency)} with UPI`,
        nonce,
        body,
        style: UPI_STYLE,
        head: '<noscript><meta http-equiv="refresh" content="5"></noscript>',
        script: followScript(statusUrl, selfUrl),
      }),
      formTargets: [],
    };
  }
  if (view.kind === 'simulator') {
    const button = (choice: string, label: string) =>
      `<button type="submit" name="choice" value="${choice}" class="${choice === 'success' ? 'success' : choice === 'failure' ? 'failure' : choice === 'expire' ? 'expire' : 'cancel'}">${label}</button>`;
    const list = CHOICES.map(
      (entry) => `<li>${button(entry.choice, entry.label)}<span class="says">${entry.says}</span></li>`,
    ).join('\n      ');
    const to =
      payment.upi_flow === 'collect'
        ? `<dt>Request to</dt><dd>${escapeHtml(maskVpa(payment.upi_vpa ?? ''))}</dd>`
        : '<dt>Payee</dt><dd>Kosh Sandbox <span class="vpa">sandbox.payee@kosh</span></dd>';
    const body = `<main>
  <h1>Kosh sandbox UPI app</h1>
  <p class="note">Test mode: no money moves. Choose what the customer’s UPI app and bank do.</p>
  <dl>
    <dt>Merchant</dt><dd id="merchant">${escapeHtml(view.merchantName)}</dd>
    <dt>Amount</dt><dd id="amount">${amount}</dd>
    ${to}
    <dt>Payment</dt><dd class="id">${escapeHtml(payment.id)}</dd>
  </dl>
  <form method="POST" action="${escapeHtml(selfUrl)}">
    ${hiddenInputs({ token: view.token })}
    <ul class="outcomes">
      ${list}
    </ul>
  </form>
</main>`;
    return {
      status: 200,
      html: bankDocument({ title: 'Kosh sandbox UPI app', nonce, body, style: SIMULATOR_STYLE }),
      formTargets: [],
    };
  }
  if (view.kind === 'simulated') {
    const pageUrl = selfUrl.replace(/\/upi-simulator\/$/, '/authentication/');
    const said =
      view.choice === 'expire'
        ? payment.status === 'created'
          ? 'Nothing was sent: the payment fails with upi_expired at its expiry.'
          : `The payment is ${escapeHtml(payment.status)} already.`
        : `You chose “${escapeHtml(CHOICES.find((entry) => entry.choice === view.choice)?.label ?? view.choice)}”. The payment is now ${escapeHtml(payment.status)}.`;
    const body = `<main>
  <h1>Kosh sandbox UPI app</h1>
  <p id="result" role="status">${said}</p>
  <p><a href="${escapeHtml(pageUrl)}">Back to the payment page</a></p>
</main>`;
    return {
      status: 200,
      html: bankDocument({ title: 'Kosh sandbox UPI app', nonce, body }),
      formTargets: [],
    };
  }
  const title = OUTCOME_TITLES[payment.status] ?? 'Payment';
  const reason =
    payment.status === 'failed' && payment.error_reason ? `<p>${escapeHtml(payment.error_reason)}</p>` : '';
  const body = `<main>
  <h1>${title}</h1>
  <dl>
    <dt>Merchant</dt><dd>${escapeHtml(view.merchantName)}</dd>
    <dt>Amount</dt><dd>${amount}</dd>
    <dt>Payment</dt><dd>${escapeHtml(payment.id)}</dd>
  </dl>
  ${reason}
  <p class="note">You can close this page; ${escapeHtml(view.merchantName)} is told of the outcome.</p>
</main>`;
  return { status: 200, html: bankDocument({ title, nonce, body }), formTargets: [] };
}

/** India Standard Time (UTC+5:30, no daylight saving): the clock of the customers of a UPI payment. */
function indianTime(at: Date): string {
  return new Date(at.getTime() + 330 * 60_000).toISOString().slice(11, 16);
}
