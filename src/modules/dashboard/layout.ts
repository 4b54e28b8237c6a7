import { type Html, html, htmlDocument } from '../../pages/html.js';
import { STYLESHEET_NAME } from './assets.js';
import type { DashboardSession } from './users.service.js';

export const DASHBOARD = '/dashboard';

export interface Notice {
  kind: 'info' | 'error';
  text: string;
  /** A secret shown once (a new key's), under the text. */
  secret?: string;
}

const MERCHANT_NAV = [
  ['/', 'Home'],
  ['/payments/', 'Payments'],
  ['/orders/', 'Orders'],
  ['/refunds/', 'Refunds'],
  ['/webhooks/', 'Webhooks'],
  ['/keys/', 'API keys'],
  ['/settings/', 'Settings'],
] as const;

const PARTNER_NAV = [
  ['/', 'Merchants'],
  ['/keys/', 'API keys'],
] as const;

function document(title: string, body: Html): string {
  return htmlDocument({
    title: `${title} · Kosh dashboard`,
    head: html`<link rel="stylesheet" href="${DASHBOARD}/assets/${STYLESHEET_NAME}">`,
    body,
  });
}

export function csrfField(session: DashboardSession): Html {
  return html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
}

function noticeBlock(notice: Notice | undefined): Html {
  if (!notice) return html``;
  return html`<div class="notice ${notice.kind === 'error' ? 'error' : ''}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}${
    notice.secret ? html`<code class="secret" data-secret>${notice.secret}</code>` : ''
  }</div>`;
}

/** A signed-in page: the account, the test/live switch, the sections, then the content. */
export function page(
  session: DashboardSession,
  options: { title: string; section: string; notice?: Notice },
  content: Html,
): string {
  const nav = session.accountKind === 'partner' ? PARTNER_NAV : MERCHANT_NAV;
  const other = session.mode === 'test' ? 'live' : 'test';
  const links = nav.map(
    ([path, label]) =>
      html`<a href="${DASHBOARD}${path}"${options.section === path ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  return document(
    options.title,
    html`<header class="top">
  <a class="brand" href="${DASHBOARD}/">Kosh</a>
  <span class="account">${session.accountName} · <span class="mono">${session.user.account_id}</span></span>
  <form class="mode" method="post" action="${DASHBOARD}/mode/">
    ${csrfField(session)}
    <span class="badge ${session.mode}" data-mode="${session.mode}">${session.mode === 'test' ? 'Test mode' : 'Live mode'}</span>
    <button class="secondary" name="mode" value="${other}">Switch to ${other}</button>
  </form>
  <form class="mode" method="post" action="${DASHBOARD}/logout/">
    ${csrfField(session)}
    <span class="account">${session.user.email}</span>
    <button class="secondary">Log out</button>
  </form>
</header>
<nav class="main" aria-label="Sections">${links}</nav>
<main>
<h1>${options.title}</h1>
${noticeBlock(options.notice)}
${content}
</main>`,
  );
}

/** The login page: email and password, and the login form's own CSRF token. */
export function loginPage(csrf: string, error?: string): string {
  return document(
    'Log in',
    html`<main class="login">
<h1>Log in to Kosh</h1>
${noticeBlock(error ? { kind: 'error', text: error } : undefined)}
<form method="post" action="${DASHBOARD}/login/">
  <input type="hidden" name="csrf" value="${csrf}">
  <label>Email<input type="email" name="email" autocomplete="username" required maxlength="254"></label>
  <label>Password<input type="password" name="password" autocomplete="current-password" required maxlength="256"></label>
  <button>Log in</button>
</form>
</main>`,
  );
}

/** An error page for a signed-in user (a missing object, a refused action). */
export function errorPage(session: DashboardSession | undefined, status: number, message: string): string {
  const body = html`<p>${message}</p><p><a href="${DASHBOARD}/">Back to the dashboard</a></p>`;
  if (session)
    return page(session, { title: status === 404 ? 'Not found' : 'Something went wrong', section: '' }, body);
  return document(
    'Error',
    html`<main class="login"><h1>${status === 404 ? 'Not found' : 'Error'}</h1>${body}</main>`,
  );
}
