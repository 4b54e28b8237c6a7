import { amountText, hiddenInputs, nonceDocument, type Page } from '../../pages/document.js';
import { escapeHtml } from '../../pages/html.js';
import type { CheckoutForm, CheckoutPageView, Instrument, StartedStep } from './checkout-page.service.js';

type OpenView = Extract<CheckoutPageView, { kind: 'open' }>;

/** A refusal shown on the page: the message, and the form field it is about (focused and marked). */
export interface PageError {
  message: string;
  field: string | null;
}

/**
 * One stylesheet for every checkout page, small enough to send inline: no third-party origin, no
 * web font, no image. Phones first; at 40rem and wider the QR code is offered instead of the app.
 */
const STYLE = `*{box-sizing:border-box}[hidden]{display:none!important}body{font:16px/1.45 system-ui,sans-serif;background:#eef1f5;color:#1b2230;margin:0;padding:1rem}
main{max-width:30rem;margin:0 auto;background:#fff;border-radius:.6rem;padding:1.25rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.6rem;margin:.1rem 0}h2{font-size:1rem;margin:0}.merchant{margin:0;font-weight:600;color:#3b4558}
.order{margin:0;color:#556;font-size:.85rem;overflow-wrap:anywhere}.test{display:inline-block;margin:.5rem 0 0;padding:.1rem .5rem;
border-radius:1rem;background:#fff1c2;color:#5c4500;font-size:.8rem}
.alert{border:1px solid #d93025;background:#fdecea;color:#7a1a12;border-radius:.4rem;padding:.6rem .8rem;margin:1rem 0}
.info{border:1px solid #b7c7e6;background:#eef3fc;border-radius:.4rem;padding:.6rem .8rem;margin:1rem 0}
.alert p,.info p{margin:0}fieldset{border:0;padding:0;margin:1.25rem 0 0;min-width:0}legend{font-weight:700;padding:0;margin-bottom:.5rem}
.field{display:grid;gap:.2rem;margin-bottom:.7rem}.field label{font-weight:600;font-size:.9rem}
input[type=text],input[type=email],input[type=tel],input[type=search]{font:inherit;width:100%;padding:.55rem .6rem;border:1px solid #8a93a6;border-radius:.35rem}
input[aria-invalid=true]{border-color:#d93025;box-shadow:0 0 0 1px #d93025}.hint{color:#556;font-size:.8rem;margin:0}
.opts{list-style:none;margin:0;padding:0;display:grid;gap:.4rem}.opt{display:flex;align-items:center;gap:.6rem;
border:1px solid #cfd5df;border-radius:.4rem;padding:.55rem .7rem}.opt:has(input:checked){border-color:#0b57d0;background:#f3f7fe}
.opt input{width:1.15rem;height:1.15rem;margin:0;flex:none;accent-color:#0b57d0}.opt label{flex:1;cursor:pointer}
.group{margin-top:1rem}.group h3{font-size:.85rem;color:#556;margin:.6rem 0 .35rem;font-weight:600}
.search{display:flex;gap:.4rem;margin-bottom:.5rem}.search button{font:inherit;padding:.5rem .8rem;border:1px solid #8a93a6;background:#fff;border-radius:.35rem}
.sub{margin:.4rem 0 0 2.3rem}.wide{display:none}.pay{display:block;width:100%;margin-top:1.25rem;padding:.85rem;border:0;border-radius:.4rem;
background:#0b57d0;color:#fff;font:600 1.05rem system-ui,sans-serif;cursor:pointer}.pay:focus-visible,.opt input:focus-visible{outline:3px solid #f2a900;outline-offset:2px}
a.pay{text-align:center;text-decoration:none}.done{margin-top:1rem}.info{overflow-wrap:anywhere}.foot{color:#556;font-size:.8rem;text-align:center;margin:1rem 0 0}a{color:#0b57d0}
@media (min-width:40rem){body{padding:2rem}main{max-width:40rem;padding:1.75rem}.wide{display:inline}.narrow{display:none}
#banks .opts,#wallets .opts{grid-template-columns:1fr 1fr}}`;

/**
 * Filters the bank list as the customer types, without a round trip; without script the search
 * box submits its own GET form and the server filters.
 */
const SCRIPT = `(function(){var q=document.getElementById('q');var f=document.getElementById('bank-search');if(!q||!f)return;
var items=[].slice.call(document.querySelectorAll('#banks li'));var none=document.getElementById('no-bank');
function run(){var t=q.value.trim().toLowerCase();var shown=0;items.forEach(function(li){var hit=!t||li.textContent.toLowerCase().indexOf(t)>=0;li.hidden=!hit;if(hit)shown++;});
none.hidden=shown>0;[].slice.call(document.querySelectorAll('#banks .group')).forEach(function(g){g.hidden=!g.querySelector('li:not([hidden])');});}
q.addEventListener('input',run);f.addEventListener('submit',function(e){e.preventDefault();run();});run();})();`;

function checkoutDocument(title: string, nonce: string, body: string, script?: string): string {
  return nonceDocument({ title, nonce, body, style: STYLE, ...(script ? { script } : {}) });
}

function header(merchant: string, amount: string, orderId: string | null, test: boolean): string {
  return `<header>
  <p class="merchant">${escapeHtml(merchant)}</p>
  <h1>${escapeHtml(amount)}</h1>
  ${orderId ? `<p class="order">Order ${escapeHtml(orderId)}</p>` : ''}
  ${test ? '<p class="test">Test mode: no money moves</p>' : ''}
</header>`;
}

/** The form fields and the radio each refusal is about (`upi.vpa` is the UPI ID box). */
function fieldId(field: string | null): string | null {
  if (field === null) return null;
  if (field === 'upi.vpa') return 'vpa';
  if (field === 'name' || field === 'email' || field === 'contact') return field;
  return 'pay';
}

function textField(
  id: 'name' | 'email' | 'contact',
  label: string,
  attributes: string,
  form: CheckoutForm,
  invalid: string | null,
  hint?: string,
): string {
  const described = [hint ? `${id}-hint` : '', invalid === id ? 'error' : ''].filter(Boolean).join(' ');
  return `<div class="field"><label for="${id}">${label}</label>
  <input id="${id}" name="${id}" ${attributes} required value="${escapeHtml(form[id] ?? '')}"${
    invalid === id ? ' aria-invalid="true"' : ''
  }${described ? ` aria-describedby="${described}"` : ''}>${hint ? `<p class="hint" id="${id}-hint">${hint}</p>` : ''}</div>`;
}

function option(value: string, id: string, label: string, checked: boolean): string {
  return `<li class="opt"><input type="radio" name="pay" value="${escapeHtml(value)}" id="${escapeHtml(id)}"${
    checked ? ' checked' : ''
  }><label for="${escapeHtml(id)}">${label}</label></li>`;
}

function instruments(kind: 'bank' | 'wallet', list: Instrument[], selected: string): string {
  return list
    .map((entry) =>
      option(
        `${kind}:${entry.code}`,
        `${kind}-${entry.code}`,
        escapeHtml(entry.label),
        selected === `${kind}:${entry.code}`,
      ),
    )
    .join('\n');
}

function lastAttemptNote(view: OpenView): string {
  const last = view.lastAttempt;
  if (!last) return '';
  const how = last.method === 'upi' ? 'UPI' : last.instrument_name;
  if (last.status === 'failed') {
    const reason = last.error_reason ? ` ${escapeHtml(last.error_reason)}` : '';
    // A payment Kosh stopped waiting for may still be authorised by the bank: never "no money was taken".
    const money = last.unanswered
      ? ' If your bank takes the money for it all the same, you do not pay twice: that payment completes your order, or is refunded to you by itself.'
      : ' No money was taken.';
    return `<div class="alert" role="alert" id="last-attempt"><p><strong>Your payment by ${escapeHtml(how)} did not go through.</strong>${reason}${money} Choose a way to pay to try again.</p></div>`;
  }
  if (last.status === 'created' || last.status === 'pending') {
    return `<div class="info" id="last-attempt"><p>Your payment by ${escapeHtml(how)} is still waiting for your bank. If you approved it, <a href="${escapeHtml(last.page)}">go back to it</a> rather than paying again.</p></div>`;
  }
  return '';
}

/** Only the refused field's own words; everything else the customer typed stays as it was. */
function renderOpen(
  view: OpenView,
  _nonce: string,
  selfUrl: string,
  options: { form: CheckoutForm; error: PageError | null; query: string },
): string {
  const { error, query } = options;
  // The details of the last attempt stay filled in: a customer trying again types them once.
  const last = view.lastAttempt;
  const form: CheckoutForm = {
    ...(last && { name: last.name, email: last.email, contact: last.contact }),
    ...options.form,
  };
  const amount = amountText(view.amount, view.currency);
  const invalid = fieldId(error?.field ?? null);
  // UPI first: the default choice, unless the customer chose something else before a refusal.
  const selected = form.pay ?? (view.upi?.app ? 'upi' : view.upi?.collect ? 'upi_collect' : '');
  const customer = view.askCustomer
    ? `<fieldset><legend>Your details</legend>
  ${textField('name', 'Name', 'autocomplete="name" maxlength="100" type="text"', form, invalid)}
  ${textField('email', 'Email', 'type="email" autocomplete="email" maxlength="254"', form, invalid)}
  ${textField('contact', 'Mobile number', 'type="tel" autocomplete="tel" inputmode="tel" maxlength="20"', form, invalid, 'With the country code, such as +919876543210.')}
</fieldset>`
    : '';
  const upi = view.upi
    ? `<fieldset id="upi"><legend>UPI</legend><ul class="opts">
${view.upi.app ? option('upi', 'pay-upi', '<span class="narrow">Pay with a UPI app on this phone</span><span class="wide">Scan a QR code with any UPI app</span>', selected === 'upi') : ''}
${
  view.upi.collect
    ? `${option('upi_collect', 'pay-collect', 'Send a request to my UPI ID', selected === 'upi_collect')}
<li class="sub field"><label for="vpa">UPI ID</label><input id="vpa" name="vpa" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="100" placeholder="name@bank" value="${escapeHtml(form.vpa ?? '')}"${
        invalid === 'vpa' ? ' aria-invalid="true" aria-describedby="error"' : ''
      }></li>`
    : ''
}
</ul></fieldset>`
    : '';
  let banks = '';
  if (view.banks) {
    const needle = query.trim().toLowerCase();
    const matches = (entry: Instrument) =>
      !needle || entry.label.toLowerCase().includes(needle) || entry.code.toLowerCase().includes(needle);
    const mostUsed = view.banks.mostUsed.filter(matches);
    const others = view.banks.others.filter(matches);
    const group = (title: string, list: Instrument[]) =>
      list.length === 0
        ? ''
        : `<div class="group"><h3>${title}</h3><ul class="opts">${instruments('bank', list, selected)}</ul></div>`;
    banks = `<fieldset id="banks"><legend>Net banking</legend>
<div class="field" role="search"><label for="q">Find your bank</label>
<div class="search"><input type="search" id="q" name="q" form="bank-search" value="${escapeHtml(query)}" aria-describedby="no-bank"><button type="submit" form="bank-search">Search</button></div></div>
${group('Most used', mostUsed)}
${group(mostUsed.length > 0 ? 'All other banks' : 'Banks', others)}
<p class="hint" id="no-bank"${mostUsed.length + others.length > 0 ? ' hidden' : ''}>No bank matches “${escapeHtml(query)}”. <a href="${escapeHtml(selfUrl)}#banks">Show every bank</a></p>
</fieldset>`;
  }
  const wallets = view.wallets
    ? `<fieldset id="wallets"><legend>Wallets</legend><ul class="opts">${instruments('wallet', view.wallets, selected)}</ul></fieldset>`
    : '';
  const alert = error
    ? `<div class="alert" role="alert" id="error"><p>${escapeHtml(error.message)}${
        invalid && invalid !== 'pay' ? ` <a href="#${invalid}">Correct it</a>` : ''
      }</p></div>`
    : lastAttemptNote(view);
  return `<main>
${header(view.merchantName, amount, view.session.order_id, view.mode === 'test')}
${alert}
<form method="POST" action="${escapeHtml(selfUrl)}" id="pay-form">
${customer}
${upi}
${banks}
${wallets}
<button type="submit" class="pay" id="pay">Pay ${escapeHtml(amount)}</button>
</form>
<form id="bank-search" method="GET" action="${escapeHtml(selfUrl)}#banks"></form>
<p class="foot">Payments by Kosh. ${escapeHtml(view.merchantName)} is told of the outcome; you return to its site.</p>
</main>`;
}

/** The page for a session's state; `redirect` pages carry no body. */
export function renderCheckoutPage(
  view: CheckoutPageView,
  nonce: string,
  selfUrl: string,
  options: { form?: CheckoutForm; error?: PageError | null; query?: string; status?: number } = {},
): Page {
  const amount = amountText(view.amount, view.currency);
  const name = escapeHtml(view.merchantName);
  /** A session that offers no choice: the merchant and amount, then what the page has to say. */
  const closed = (title: string, status: number, content: string, test = false): Page => ({
    status,
    html: checkoutDocument(
      title,
      nonce,
      `<main>\n${header(view.merchantName, amount, null, test)}\n${content}\n</main>`,
    ),
    formTargets: [],
  });
  if (view.kind === 'paid') {
    return closed(
      'Order paid',
      options.status ?? 200,
      `<h2 class="done">This order is paid</h2>
<div class="info" role="status"><p>${name} has received ${escapeHtml(amount)} (payment ${escapeHtml(view.paymentId)}). There is nothing more to pay through this link.</p></div>${owedBackNote(view.owedBack)}
<a class="pay" id="return" href="${escapeHtml(view.returnPage)}">Return to ${name}</a>`,
      view.test,
    );
  }
  if (view.kind === 'closing') {
    const back =
      view.paymentPage === null
        ? ''
        : `\n<a class="pay" id="payment" href="${escapeHtml(view.paymentPage)}">Back to the payment you started</a>`;
    return closed(
      'Payment link closing',
      options.status ?? 200,
      `<h2>This payment link takes no new payments</h2>
<div class="info" role="status"><p>Its time is up, and a payment you started through it is still being completed: its result reaches ${name} on its own. Nothing more is charged through this link.</p></div>${back}`,
    );
  }
  if (view.kind === 'unavailable') {
    return closed(
      'Payment link not available',
      403,
      `<h2>This payment link is not available</h2>
<p>${name} cannot take payments through this link right now. Contact ${name} to pay another way.</p>`,
    );
  }
  if (view.kind === 'expired') {
    return closed(
      'Payment link expired',
      410,
      `<h2>This payment link has expired</h2>
<p>It takes no more payments. Go back to ${name} to pay again.</p>`,
    );
  }
  const body = renderOpen(view, nonce, selfUrl, {
    form: options.form ?? {},
    error: options.error ?? null,
    query: options.query ?? '',
  });
  return {
    status: options.status ?? 200,
    html: checkoutDocument(
      `Pay ${amount} to ${view.merchantName}`,
      nonce,
      body,
      view.banks ? SCRIPT : undefined,
    ),
    formTargets: [],
  };
}

/** A started payment: a redirect, or the auto-submitting GET to Kosh's bank step (an html_form bank). */
export function renderStarted(step: StartedStep, nonce: string): Page {
  if (step.kind === 'redirect') {
    return { status: 303, html: '', formTargets: [], redirect: step.url, redirectStatus: 303 };
  }
  const body = `<main>
<h1>Taking you to your ${step.label}…</h1>
<form id="kosh-next" method="GET" action="${escapeHtml(step.url)}">
  ${hiddenInputs(step.fields)}
  <noscript><button type="submit" class="pay">Continue to your ${step.label}</button></noscript>
</form>
</main>`;
  return {
    status: 200,
    html: checkoutDocument(
      `Taking you to your ${step.label}`,
      nonce,
      body,
      "document.getElementById('kosh-next').submit();",
    ),
    formTargets: [],
  };
}

/** A session that does not exist, or any other refusal that has no page of its own. */
export function renderCheckoutError(status: number, message: string, nonce: string): Page {
  const title = status === 404 ? 'Payment link not found' : 'Payment page unavailable';
  const body = `<main><h1>${title}</h1><p>${escapeHtml(message)}</p></main>`;
  return { status, html: checkoutDocument(title, nonce, body), formTargets: [] };
}

/**
 * Money a second payment took after the order was paid (two tabs, an old UPI request approved
 * late): the customer is told it was not kept, so that nobody pays a third time or disputes it.
 */
function owedBackNote(owed: { id: string; amount: number; currency: string; refunded: boolean }[]): string {
  if (owed.length === 0) return '';
  const items = owed.map(
    (payment) =>
      `<li>${escapeHtml(amountText(payment.amount, payment.currency))} (payment ${escapeHtml(payment.id)}): ${
        payment.refunded
          ? 'refunded to the account it came from.'
          : 'being refunded to the account it came from.'
      }</li>`,
  );
  return `\n<div class="info" id="owed-back"><p>${owed.length === 1 ? 'Another payment' : 'Other payments'} you made for this order ${owed.length === 1 ? 'was' : 'were'} not needed:</p><ul>${items.join('')}</ul></div>`;
}
