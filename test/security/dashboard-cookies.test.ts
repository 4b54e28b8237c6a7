import qs from 'qs';
import { expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/harness.js';

/**
 * A session cookie Kosh did not issue (malformed, oversized, doubled, foreign) is no session: every
 * dashboard page and form post answers what it answers a visitor without one (the login page, or
 * a redirect to it; the login form's own expired cookie: a 400 in the dashboard's error page),
 * never a 5xx.
 */

const HOSTILE_COOKIES: [string, string][] = [
  ['a broken percent-escape', 'kosh_session=%E0%A4%A'],
  ['a lone percent sign', 'kosh_session=%'],
  ['invalid base64', 'kosh_session=!!!not*base64==='],
  ['only separators', ';;;'],
  ['separators around the cookie', ';;kosh_session=;;;'],
  ['non-ASCII text', 'kosh_session=сессия-ü-🙂'],
  ['an encoded non-ASCII value', `kosh_session=${encodeURIComponent('日本語')}`],
  ['an 8 KB value', `kosh_session=${'A'.repeat(8192)}`],
  ['a doubled cookie', 'kosh_session=a; kosh_session=b'],
  ['a doubled, well-formed cookie', `kosh_session=${'A'.repeat(43)}; kosh_session=${'B'.repeat(43)}`],
  ['a well-formed token of no session', `kosh_session=${'x'.repeat(43)}`],
  ['a quoted value', 'kosh_session="abc"'],
  ['a login CSRF cookie that is malformed', 'kosh_login_csrf=%E0%A4%A; kosh_session=%FF'],
];

const PAGES = [
  '/dashboard/',
  '/dashboard/payments/',
  '/dashboard/payments/?status=captured&q=pay_x',
  '/dashboard/payments/export.csv',
  '/dashboard/payments/pay_nothing/',
  '/dashboard/orders/',
  '/dashboard/orders/order_nothing/',
  '/dashboard/refunds/',
  '/dashboard/refunds/rfnd_nothing/',
  '/dashboard/webhooks/',
  '/dashboard/keys/',
  '/dashboard/settings/',
  '/dashboard/merchants/mid_nothing/',
];

const POSTS: [string, Record<string, string>][] = [
  ['/dashboard/logout/', { csrf: 'x'.repeat(43) }],
  ['/dashboard/mode/', { csrf: 'x'.repeat(43), mode: 'live' }],
  ['/dashboard/keys/', { csrf: 'x'.repeat(43) }],
  ['/dashboard/payments/pay_nothing/refunds/', { csrf: 'x'.repeat(43), amount: '100' }],
  ['/dashboard/webhooks/', { csrf: 'x'.repeat(43), url: 'https://hooks.example.com/k' }],
];

describeEachDatabase('security: dashboard cookies Kosh did not issue', (harness) => {
  for (const [what, cookie] of HOSTILE_COOKIES) {
    it(`treats ${what} as no session on every page`, async () => {
      const app = harness().app;
      for (const url of PAGES) {
        const response = await app.inject({ method: 'GET', url, headers: { cookie } });
        expect(response.statusCode, `${url}: ${response.body}`).toBe(303);
        expect(response.headers.location, url).toBe('/dashboard/login/');
        expect(response.headers['set-cookie'], url).toBeUndefined();
      }

      const login = await app.inject({ method: 'GET', url: '/dashboard/login/', headers: { cookie } });
      expect(login.statusCode, login.body).toBe(200);
      expect(login.body).toContain('Log in to Kosh');

      for (const [url, form] of POSTS) {
        const response = await app.inject({
          method: 'POST',
          url,
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          payload: qs.stringify(form),
        });
        expect(response.statusCode, `${url}: ${response.body}`).toBe(303);
        expect(response.headers.location, url).toBe('/dashboard/login/');
        expect(response.headers['set-cookie'], url).toBeUndefined();
      }

      // The login form's own cookie: a malformed or missing one is an expired form (400), never a 5xx.
      const posted = await app.inject({
        method: 'POST',
        url: '/dashboard/login/',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: qs.stringify({ csrf: '%E0%A4%A', email: 'nobody@shop.example', password: 'whatever it is' }),
      });
      expect(posted.statusCode, posted.body).toBe(400);
      expect(posted.headers['content-type']).toMatch(/^text\/html/);
      expect(posted.body).toContain('The login form has expired');
    });
  }
});
