import type { LightMyRequestResponse } from 'fastify';
import qs from 'qs';
import { expect } from 'vitest';
import type { Harness, TestAccount } from './harness.js';
import { choose, createOrder, createPayment, openPage } from './payments.js';

export const PASSWORD = 'correct horse battery staple';

/**
 * A dashboard visitor without a browser: keeps its cookies, reads each page's CSRF token, follows
 * nothing by itself. The browser tests (test/browser/dashboard.browser.test.ts) drive Chromium.
 */
export class Visitor {
  cookies = new Map<string, string>();
  lastPage = '';

  constructor(
    private readonly harness: () => Harness,
    readonly address = '203.0.113.7',
  ) {}

  private remember(response: LightMyRequestResponse): void {
    const header = response.headers['set-cookie'];
    for (const line of [header ?? []].flat()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = decodeURIComponent(pair!.slice(at + 1));
      if (/Max-Age=0/.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, unknown>) {
    const headers: Record<string, string> = {};
    if (this.cookies.size) {
      headers.cookie = [...this.cookies]
        .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
        .join('; ');
    }
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await this.harness().app.inject({
      method,
      url,
      headers,
      payload: form ? qs.stringify(form) : undefined,
      remoteAddress: this.address,
    });
    this.remember(response);
    if (response.statusCode === 200 && response.headers['content-type']?.toString().startsWith('text/html')) {
      this.lastPage = response.body;
    }
    return response;
  }

  get csrf(): string {
    const token = /name="csrf" value="([^"]+)"/.exec(this.lastPage)?.[1];
    expect(token, 'a CSRF field on the last page').toBeDefined();
    return token as string;
  }

  async login(email: string, password = PASSWORD) {
    await this.request('GET', '/dashboard/login/');
    return this.request('POST', '/dashboard/login/', { csrf: this.csrf, email, password });
  }

  /**
   * The hidden fields of the last page's form that posts to `action`, as a browser sends them (its
   * CSRF token and any one-time key); the CSRF token alone when the page has no such form.
   */
  formFields(action: string): Record<string, string> {
    const start = this.lastPage.indexOf(`action="${action}"`);
    const form = start < 0 ? '' : this.lastPage.slice(start, this.lastPage.indexOf('</form>', start));
    const fields: Record<string, string> = { csrf: this.csrf };
    for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields[name as string] = value as string;
    return fields;
  }

  /** A signed-in form post, with the hidden fields of `page`'s form for `action` (fetched first). */
  async submit(page: string, action: string, fields: Record<string, unknown> = {}) {
    const opened = await this.request('GET', page);
    expect(opened.statusCode, opened.body).toBe(200);
    return this.request('POST', action, { ...this.formFields(action), ...fields });
  }
}

/**
 * A new dashboard user of `accountId`, signed in from `address` and switched to live mode: what a
 * merchant's operator sees of live payments and keys.
 */
export async function liveVisitor(
  harness: () => Harness,
  accountId: string,
  address: string,
): Promise<Visitor> {
  const visitor = new Visitor(harness, address);
  const email = `live-${address}-${accountId}@shop.example`;
  await harness().container.services.dashboardUsers.createUser({ accountId, email, password: PASSWORD });
  expect((await visitor.login(email)).statusCode).toBe(303);
  expect((await visitor.submit('/dashboard/', '/dashboard/mode/', { mode: 'live' })).statusCode).toBe(303);
  return visitor;
}

/**
 * The dashboard suites' users, sign-ins and payments, for one harness. `owner` is the merchant a
 * helper uses when given no account, and the email of the user that signs in for it.
 */
export function dashboardHelpers(
  harness: () => Harness,
  owner: () => { merchant: TestAccount; email: string },
) {
  let counter = 0;

  /** A new address for a visitor, so that no two visitors share a login throttle. */
  const nextAddress = () => `198.51.100.${++counter}`;

  async function userFor(account: TestAccount): Promise<string> {
    const address = `user${++counter}-${account.id}@shop.example`;
    await harness().container.services.dashboardUsers.createUser({
      accountId: account.id,
      email: address,
      password: PASSWORD,
    });
    return address;
  }

  async function signedIn(account: TestAccount = owner().merchant): Promise<Visitor> {
    const visitor = new Visitor(harness, nextAddress());
    const response = await visitor.login(
      account === owner().merchant ? owner().email : await userFor(account),
    );
    expect(response.statusCode, response.body).toBe(303);
    return visitor;
  }

  async function captured(account = owner().merchant, overrides: Record<string, unknown> = {}) {
    const orderId = await createOrder(harness(), account, 5000);
    const { paymentId } = await createPayment(harness(), account, overrides, orderId);
    const chosen = await choose(harness(), paymentId, await openPage(harness(), paymentId), 'success');
    expect(chosen.statusCode).toBe(200);
    return { paymentId, orderId };
  }

  return { nextAddress, userFor, signedIn, captured };
}
