import type { Page as ListPage } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import { type Html, html } from '../../pages/html.js';
import type { ApiKey } from '../accounts/keys.routes.js';
import type { KycDocument } from '../merchants/documents.service.js';
import type { Merchant } from '../merchants/merchants.model.js';
import type { Order } from '../orders/orders.model.js';
import type { Payment } from '../payments/payments.model.js';
import type { Refund } from '../refunds/refunds.model.js';
import type { Delivery, Endpoint } from '../webhooks/webhooks.model.js';
import {
  ORDER_STATUSES,
  type OrderFilters,
  PAYMENT_METHODS,
  PAYMENT_STATUSES,
  type PaymentFilters,
  REFUND_STATUSES,
  type RefundFilters,
} from './filters.js';
import { FORM_KEY_FIELD } from './form-once.js';
import { money, when } from './format.js';
import { csrfField, DASHBOARD } from './layout.js';
import type { DashboardSession } from './users.service.js';

/** A form's one-time key (./form-once.ts): one rendering of the form makes its object once. */
const formKeyField = (formKey: string): Html =>
  html`<input type="hidden" name="${FORM_KEY_FIELD}" value="${formKey}">`;

export interface EventView {
  id: string;
  type: string;
  created_at: number;
  deliveries: Delivery[];
}

export interface Summary {
  today: { count: number; amount: number };
  last30: { count: number; amount: number; failed: number };
  /** Captured amount per day, oldest first, 30 entries. */
  days: { day: string; amount: number; count: number }[];
  currency: string;
}

function badge(status: string): Html {
  return html`<span class="badge ${status}">${status}</span>`;
}

function field(label: string, value: unknown): Html {
  return html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? '—' : value}</dd>`;
}

function table(headings: (string | [string, 'num'])[], rows: Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  const head = headings.map((heading) =>
    Array.isArray(heading)
      ? html`<th scope="col" class="num">${heading[0]}</th>`
      : html`<th scope="col">${heading}</th>`,
  );
  const label = Array.isArray(headings[0]) ? headings[0][0] : headings[0];
  // A region that scrolls sideways on a narrow screen: focusable, so a keyboard can scroll it.
  return html`<div class="table-wrap" role="region" tabindex="0" aria-label="${label} table"><table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/**
 * "Next page" keeps the filters and moves the cursor. A page with two lists (a merchant's documents
 * and VPAs) names each list's cursor, and the link says which list it moves.
 */
function pager(
  list: ListPage<unknown>,
  path: string,
  query: Record<string, string | undefined>,
  cursor = 'cursor',
  label = 'Next page',
): Html {
  if (!list.has_more || !list.next_cursor) return html``;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value && key !== cursor) params.set(key, value);
  params.set(cursor, list.next_cursor);
  return html`<div class="pager"><a class="button secondary" href="${DASHBOARD}${path}?${params.toString()}">${label}</a></div>`;
}

function select(name: string, label: string, options: readonly string[], value: string | undefined): Html {
  return html`<label>${label}<select name="${name}"><option value="">Any</option>${options.map(
    (option) => html`<option${option === value ? html` selected` : ''}>${option}</option>`,
  )}</select></label>`;
}

function dateInput(name: string, label: string, value: string | undefined): Html {
  return html`<label>${label}<input type="date" name="${name}" value="${value ?? ''}"></label>`;
}

/** Home: captured volume today and over 30 days, the success rate, and a bar chart per day. */
export function homeContent(summary: Summary): Html {
  const attempts = summary.last30.count + summary.last30.failed;
  const rate = attempts === 0 ? '—' : `${((summary.last30.count / attempts) * 100).toFixed(1)} %`;
  const max = Math.max(1, ...summary.days.map((day) => day.amount));
  const width = 600;
  const height = 160;
  const bar = width / summary.days.length;
  const bars = summary.days.map((day, i) => {
    const h = Math.round((day.amount / max) * (height - 10));
    return html`<rect x="${(i * bar + 1).toFixed(1)}" y="${height - h}" width="${(bar - 2).toFixed(1)}" height="${h}"><title>${day.day}: ${money(day.amount, summary.currency)} (${day.count})</title></rect>`;
  });
  return html`<div class="cards">
  <div class="card"><div class="label">Captured today</div><div class="value" data-stat="today-amount">${money(summary.today.amount, summary.currency)}</div><div class="muted">${summary.today.count} payments</div></div>
  <div class="card"><div class="label">Captured, last 30 days</div><div class="value" data-stat="30d-amount">${money(summary.last30.amount, summary.currency)}</div><div class="muted">${summary.last30.count} payments</div></div>
  <div class="card"><div class="label">Success rate, last 30 days</div><div class="value" data-stat="success-rate">${rate}</div><div class="muted">captured of captured and failed</div></div>
</div>
<h2>Captured per day, last 30 days</h2>
<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="Captured amount per day over the last 30 days">${bars}</svg>`;
}

/** What a payment was paid with: the bank or wallet, or for UPI the flow and the masked UPI id. */
function paidWith(payment: Payment): string {
  if (payment.upi)
    return [payment.upi.flow, payment.upi.vpa ?? payment.upi.payer_vpa].filter(Boolean).join(' · ');
  return payment.bank ?? payment.wallet ?? '';
}

/** The method's own rows of a payment's detail: bank and wallet, or the UPI flow, ids and expiry. */
function methodFields(payment: Payment): Html {
  if (!payment.upi)
    return html`${field('Bank', payment.bank)}
  ${field('Wallet', payment.wallet)}`;
  return html`${field('UPI flow', payment.upi.flow)}
  ${payment.upi.flow === 'collect' ? field('Request to', payment.upi.vpa) : ''}
  ${field('Paid from', payment.upi.payer_vpa)}
  ${field('Expires', when(payment.upi.expires_at))}`;
}

export function paymentsContent(list: ListPage<Payment>, filters: PaymentFilters): Html {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value && key !== 'cursor') params.set(key, value);
  const rows = list.data.map(
    (payment) => html`<tr>
  <td><a class="mono" href="${DASHBOARD}/payments/${payment.id}/">${payment.id}</a></td>
  <td class="num">${money(payment.amount, payment.currency)}</td>
  <td>${badge(payment.status)}${payment.refund_status ? html` ${badge(`refunded ${payment.refund_status}`)}` : ''}</td>
  <td>${payment.method} · ${paidWith(payment)}</td>
  <td>${payment.email ?? ''}</td>
  <td class="mono">${payment.order_id}</td>
  <td>${when(payment.created_at)}</td>
</tr>`,
  );
  return html`<form class="filters" method="get" action="${DASHBOARD}/payments/" role="search">
  <label>Search<input type="search" name="q" value="${filters.q ?? ''}" placeholder="pay_…, order_…, email or phone" maxlength="254"></label>
  ${select('status', 'Status', PAYMENT_STATUSES, filters.status)}
  ${select('method', 'Method', PAYMENT_METHODS, filters.method)}
  <label>Bank<input name="bank" value="${filters.bank ?? ''}" maxlength="40" size="8"></label>
  <label>Wallet<input name="wallet" value="${filters.wallet ?? ''}" maxlength="40" size="8"></label>
  ${dateInput('from', 'From', filters.from)}
  ${dateInput('to', 'To (inclusive)', filters.to)}
  <button>Apply</button>
  <a class="button secondary" href="${DASHBOARD}/payments/export.csv?${params.toString()}" download>Export CSV</a>
</form>
${table(['Payment', ['Amount', 'num'], 'Status', 'Method', 'Email', 'Order', 'Created'], rows, 'No payments match.')}
${pager(list, '/payments/', { ...filters })}`;
}

export function paymentContent(
  session: DashboardSession,
  payment: Payment,
  events: EventView[],
  refunds: ListPage<Refund>,
  /** The Refund form's one-time key (./form-once.ts). */
  formKey: string,
): Html {
  // A failed payment the bank authorised all the same holds money owed back: it is refunded too.
  const owedBack = payment.status === 'failed' && payment.authorised_at !== null;
  const refundable = payment.status === 'captured' || owedBack ? payment.amount - payment.amount_refunded : 0;
  const timeline = events.map(
    (event) => html`<li data-event="${event.id}">
  <strong>${event.type}</strong> <span class="muted">${when(event.created_at)} · <span class="mono">${event.id}</span></span>
  <ul>${event.deliveries.map(
    (delivery) =>
      html`<li data-delivery="${delivery.id}">to <span class="mono">${delivery.endpoint_id}</span>: ${badge(delivery.status)}, ${delivery.attempt_count} attempt${delivery.attempt_count === 1 ? '' : 's'}${delivery.attempts.map(
        (attempt) =>
          html` · ${attempt.status_code ?? attempt.error ?? 'no answer'} (${attempt.latency_ms} ms)`,
      )}</li>`,
  )}${event.deliveries.length === 0 ? html`<li class="muted">No deliveries (no endpoint takes this event).</li>` : ''}</ul>
  <form class="inline" method="post" action="${DASHBOARD}/events/${event.id}/resend/">${csrfField(session)}<button class="secondary">Resend</button></form>
</li>`,
  );
  const refundRows = refunds.data.map(
    (refund) =>
      html`<tr><td><a class="mono" href="${DASHBOARD}/refunds/${refund.id}/">${refund.id}</a></td><td class="num">${money(refund.amount, refund.currency)}</td><td>${badge(refund.status)}</td><td>${refund.speed}</td><td>${when(refund.created_at)}</td></tr>`,
  );
  return html`<dl class="fields">
  ${field('ID', html`<span class="mono">${payment.id}</span>`)}
  ${field('Status', badge(payment.status))}
  ${field('Amount', money(payment.amount, payment.currency))}
  ${field('Refunded', money(payment.amount_refunded, payment.currency))}
  ${field('Method', payment.method)}
  ${methodFields(payment)}
  ${field('Order', html`<a class="mono" href="${DASHBOARD}/orders/${payment.order_id}/">${payment.order_id}</a>`)}
  ${payment.checkout_session_id ? field('Checkout session', html`<span class="mono">${payment.checkout_session_id}</span>`) : ''}
  ${field('Email', payment.email)}
  ${field('Contact', payment.contact)}
  ${field('Name', payment.name)}
  ${field('Description', payment.description)}
  ${field('Bank reference', payment.bank_reference)}
  ${field('Error', payment.error_code ? `${payment.error_code}: ${payment.error_reason ?? ''}` : null)}
  ${field('Metadata', Object.keys(payment.metadata ?? {}).length ? JSON.stringify(payment.metadata) : null)}
  ${field('Created', when(payment.created_at))}
  ${field('Authorised', when(payment.authorised_at))}
  ${field('Captured', when(payment.captured_at))}
</dl>
<h2>Refunds</h2>
${table(['Refund', ['Amount', 'num'], 'Status', 'Speed', 'Created'], refundRows, 'No refunds.')}
${pager(refunds, `/payments/${payment.id}/`, {}, 'refunds_cursor', 'More refunds')}
${
  refundable > 0
    ? html`<form class="actions" method="post" action="${DASHBOARD}/payments/${payment.id}/refunds/">
  ${csrfField(session)}${formKeyField(formKey)}
  <label>Amount (in paise; up to ${refundable})<input type="number" name="amount" min="1" max="${refundable}" value="${refundable}" required></label>
  <button>Refund</button>
</form>`
    : ''
}
<h2>Events and webhook deliveries</h2>
${events.length ? html`<ul class="timeline">${timeline}</ul>` : html`<p class="muted">No events yet.</p>`}`;
}

export function ordersContent(list: ListPage<Order>, filters: OrderFilters): Html {
  const rows = list.data.map(
    (order) =>
      html`<tr><td><a class="mono" href="${DASHBOARD}/orders/${order.id}/">${order.id}</a></td><td class="num">${money(order.amount, order.currency)}</td><td>${badge(order.status)}</td><td>${order.receipt ?? ''}</td><td>${when(order.created_at)}</td></tr>`,
  );
  return html`<form class="filters" method="get" action="${DASHBOARD}/orders/" role="search">
  ${select('status', 'Status', ORDER_STATUSES, filters.status)}
  <label>Receipt<input name="receipt" value="${filters.receipt ?? ''}" maxlength="40"></label>
  ${dateInput('from', 'From', filters.from)}
  ${dateInput('to', 'To (inclusive)', filters.to)}
  <button>Apply</button>
</form>
${table(['Order', ['Amount', 'num'], 'Status', 'Receipt', 'Created'], rows, 'No orders match.')}
${pager(list, '/orders/', { ...filters })}`;
}

export function orderContent(order: Order, payments: ListPage<Payment>): Html {
  const rows = payments.data.map(
    (payment) =>
      html`<tr><td><a class="mono" href="${DASHBOARD}/payments/${payment.id}/">${payment.id}</a></td><td class="num">${money(payment.amount, payment.currency)}</td><td>${badge(payment.status)}</td><td>${when(payment.created_at)}</td></tr>`,
  );
  return html`<dl class="fields">
  ${field('ID', html`<span class="mono">${order.id}</span>`)}
  ${field('Status', badge(order.status))}
  ${field('Amount', money(order.amount, order.currency))}
  ${field('Paid', money(order.amount_paid, order.currency))}
  ${field('Receipt', order.receipt)}
  ${field('Metadata', Object.keys(order.metadata ?? {}).length ? JSON.stringify(order.metadata) : null)}
  ${field('Created', when(order.created_at))}
</dl>
<h2>Payments</h2>
${table(['Payment', ['Amount', 'num'], 'Status', 'Created'], rows, 'No payments yet.')}
${pager(payments, `/orders/${order.id}/`, {}, 'cursor', 'More payments')}`;
}

export function refundsContent(list: ListPage<Refund>, filters: RefundFilters): Html {
  const rows = list.data.map(
    (refund) =>
      html`<tr><td><a class="mono" href="${DASHBOARD}/refunds/${refund.id}/">${refund.id}</a></td><td class="num">${money(refund.amount, refund.currency)}</td><td>${badge(refund.status)}</td><td><a class="mono" href="${DASHBOARD}/payments/${refund.payment_id}/">${refund.payment_id}</a></td><td>${when(refund.created_at)}</td></tr>`,
  );
  return html`<form class="filters" method="get" action="${DASHBOARD}/refunds/" role="search">
  ${select('status', 'Status', REFUND_STATUSES, filters.status)}
  <label>Payment<input name="payment_id" value="${filters.payment_id ?? ''}" maxlength="100" placeholder="pay_…"></label>
  <button>Apply</button>
</form>
${table(['Refund', ['Amount', 'num'], 'Status', 'Payment', 'Created'], rows, 'No refunds match.')}
${pager(list, '/refunds/', { ...filters })}`;
}

export function refundContent(refund: Refund): Html {
  return html`<dl class="fields">
  ${field('ID', html`<span class="mono">${refund.id}</span>`)}
  ${field('Status', badge(refund.status))}
  ${field('Amount', money(refund.amount, refund.currency))}
  ${field('Payment', html`<a class="mono" href="${DASHBOARD}/payments/${refund.payment_id}/">${refund.payment_id}</a>`)}
  ${field('Speed', refund.speed)}
  ${field('Receipt', refund.receipt)}
  ${field('Error', refund.error_code ? `${refund.error_code}: ${refund.error_reason ?? ''}` : null)}
  ${field('Created', when(refund.created_at))}
  ${field('Processed', when(refund.processed_at))}
</dl>`;
}

export function webhooksContent(
  session: DashboardSession,
  endpoints: ListPage<Endpoint & { deliveries: Delivery[] }>,
  formKey: string,
): Html {
  const once = formKeyField(formKey);
  const blocks = endpoints.data.map(
    (endpoint) => html`<section class="card" data-endpoint="${endpoint.id}">
  <p><span class="mono">${endpoint.id}</span> ${badge(endpoint.enabled ? 'active' : 'disabled')} <span class="mono">${endpoint.url}</span></p>
  <p class="muted">Events: ${endpoint.enabled_events.join(', ')}</p>
  <div class="actions">
    <form class="inline" method="post" action="${DASHBOARD}/webhooks/${endpoint.id}/rotate/">${csrfField(session)}${once}<button class="secondary">Rotate secret</button></form>
    <form class="inline" method="post" action="${DASHBOARD}/webhooks/${endpoint.id}/${endpoint.enabled ? 'disable' : 'enable'}/">${csrfField(session)}<button class="secondary">${endpoint.enabled ? 'Disable' : 'Enable'}</button></form>
  </div>
  ${table(
    ['Delivery', 'Event', 'Status', 'Attempts', 'Last attempt', 'Action'],
    endpoint.deliveries.map(
      (delivery) =>
        html`<tr data-delivery="${delivery.id}"><td class="mono">${delivery.id}</td><td class="mono">${delivery.event_id}</td><td>${badge(delivery.status)}</td><td>${delivery.attempt_count}</td><td>${when(delivery.last_attempt_at)}</td><td>${
          endpoint.enabled
            ? html`<form class="inline" method="post" action="${DASHBOARD}/events/${delivery.event_id}/resend/">${csrfField(session)}<input type="hidden" name="endpoint_id" value="${endpoint.id}"><input type="hidden" name="back" value="webhooks"><button class="secondary">Resend</button></form>`
            : ''
        }</td></tr>`,
    ),
    'No deliveries yet.',
  )}
</section>`,
  );
  return html`<form class="actions" method="post" action="${DASHBOARD}/webhooks/">
  ${csrfField(session)}${once}
  <label>Endpoint URL<input type="url" name="url" required maxlength="2048" placeholder="https://shop.example/kosh/webhooks"></label>
  <button>Add endpoint</button>
</form>
${endpoints.data.length ? blocks : html`<p class="muted">No webhook endpoints yet.</p>`}
${pager(endpoints, '/webhooks/', {}, 'cursor', 'More endpoints')}`;
}

export function keysContent(session: DashboardSession, keys: ApiKey[], formKey: string): Html {
  const once = formKeyField(formKey);
  const rows = keys.map(
    (key) =>
      html`<tr data-key="${key.api_key}"><td class="mono">${key.api_key}</td><td>${badge(key.status)}</td><td>${when(key.created_at)}</td><td>${when(key.expires_at)}</td><td>${
        key.status === 'active'
          ? html`<form class="inline" method="post" action="${DASHBOARD}/keys/${key.api_key}/roll/">${csrfField(session)}${once}<label class="visually-hidden" for="overlap-${key.api_key}">Overlap for ${key.api_key}</label><select id="overlap-${key.api_key}" name="overlap_seconds"><option value="0">stop at once</option><option value="3600">1 hour</option><option value="86400" selected>24 hours</option><option value="604800">7 days</option></select> <button class="secondary">Roll</button></form>`
          : ''
      } ${
        key.status === 'active' || key.status === 'expiring'
          ? html`<form class="inline" method="post" action="${DASHBOARD}/keys/${key.api_key}/revoke/">${csrfField(session)}<button class="danger">Revoke</button></form>`
          : ''
      }</td></tr>`,
  );
  return html`${table(['Key', 'Status', 'Created', 'Stops', 'Actions'], rows, `No ${session.mode} keys.`)}
<form class="actions" method="post" action="${DASHBOARD}/keys/">${csrfField(session)}${once}<button>Create a ${session.mode} key</button></form>`;
}

export function settingsContent(
  methods: { netbanking: string[]; wallet: string[]; upi: { intent: boolean; collect: boolean } },
  mode: Mode,
  connectorAccounts: { id: string; connector: string; status: string }[] | undefined,
): Html {
  return html`<h2>Enabled methods</h2>
${
  mode === 'live'
    ? html`<p class="muted">What customers are offered in live mode: the banks and wallets enabled for you that your connector account takes (until your partner chooses, every one it takes).</p>`
    : ''
}
<dl class="fields">
  ${field('Net banking', methods.netbanking.length ? methods.netbanking.join(', ') : 'none')}
  ${field('Wallets', methods.wallet.length ? methods.wallet.join(', ') : 'none')}
  ${field(
    'UPI',
    [methods.upi.intent ? 'intent and QR' : '', methods.upi.collect ? 'collect' : '']
      .filter(Boolean)
      .join(', ') || 'none',
  )}
</dl>
${
  connectorAccounts
    ? html`<h2>Connector account</h2>${table(
        ['Account', 'Connector', 'Status'],
        connectorAccounts.map(
          (account) =>
            html`<tr><td class="mono">${account.id}</td><td>${account.connector}</td><td>${badge(account.status)}</td></tr>`,
        ),
        'No connector account: live payments answer connector_unavailable until one is added (docs/connectors.md).',
      )}`
    : html`<p class="muted">Test mode uses the sandbox connector; switch to live mode to see the connector account.</p>`
}`;
}

export function merchantsContent(list: ListPage<Merchant>): Html {
  const rows = list.data.map(
    (merchant) =>
      html`<tr><td><a class="mono" href="${DASHBOARD}/merchants/${merchant.id}/">${merchant.id}</a></td><td>${merchant.display_name}</td><td>${badge(merchant.status)}</td><td>${merchant.requirements.currently_due.length ? merchant.requirements.currently_due.join(', ') : '—'}</td></tr>`,
  );
  return html`${table(['Merchant', 'Name', 'Status', 'Still needed'], rows, 'No merchants onboarded yet.')}
${pager(list, '/', {})}`;
}

export function merchantContent(
  merchant: Merchant,
  documents: ListPage<KycDocument>,
  vpas: ListPage<{ id: string; address: string; status: string; created_at: number }>,
  cursors: { documents_cursor?: string; vpas_cursor?: string },
): Html {
  const here = `/merchants/${merchant.id}/`;
  const bank = merchant.bank_account;
  const address = Object.values(merchant.address).filter(Boolean).join(', ');
  const due = merchant.requirements.currently_due;
  return html`<dl class="fields">
  ${field('ID', html`<span class="mono">${merchant.id}</span>`)}
  ${field('Status', badge(merchant.status))}
  ${field('Legal name', merchant.legal_name)}
  ${field('Display name', merchant.display_name)}
  ${field('Email', merchant.email)}
  ${field('Contact', merchant.contact)}
  ${field('Business', `${merchant.business_type} · ${merchant.business_category} / ${merchant.business_subcategory}`)}
  ${field('Website', merchant.website)}
  ${field('Address', address)}
  ${field('PAN', merchant.pan)}
  ${field('GSTIN', merchant.gstin)}
  ${field(
    'Bank account',
    bank
      ? html`${bank.account_number} · ${bank.ifsc} · ${bank.bank_name} (${bank.beneficiary_name}) ${badge(bank.status)}`
      : null,
  )}
  ${field('Still needed', due.length ? html`<ul>${due.map((item) => html`<li>${item}</li>`)}</ul>` : 'nothing')}
  ${field(
    'Problems',
    merchant.requirements.errors.length
      ? html`<ul>${merchant.requirements.errors.map((error) => html`<li>${error.requirement}: ${error.reason}</li>`)}</ul>`
      : null,
  )}
  ${field('Activated', when(merchant.activated_at))}
  ${field('Created', when(merchant.created_at))}
</dl>
<h2>KYC documents</h2>
${table(
  ['Document', 'Type', 'Status', 'File', 'Uploaded'],
  documents.data.map(
    (doc) =>
      html`<tr><td class="mono">${doc.id}</td><td>${doc.document_type}</td><td>${badge(doc.status)}</td><td><a href="${DASHBOARD}/merchants/${merchant.id}/documents/${doc.id}/file" download>${doc.file_name ?? 'Download'}</a></td><td>${when(doc.created_at)}</td></tr>`,
  ),
  'No documents uploaded yet.',
)}
${pager(documents, here, cursors, 'documents_cursor', 'More documents')}
<h2>VPAs</h2>
${table(
  ['VPA', 'Address', 'Status', 'Created'],
  vpas.data.map(
    (vpa) =>
      html`<tr><td class="mono">${vpa.id}</td><td class="mono">${vpa.address}</td><td>${badge(vpa.status)}</td><td>${when(vpa.created_at)}</td></tr>`,
  ),
  'No VPAs yet.',
)}
${pager(vpas, here, cursors, 'vpas_cursor', 'More VPAs')}`;
}
