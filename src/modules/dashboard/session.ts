import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ERROR_CATALOGUE, KoshError } from '../../domain/errors.js';
import type { Mode } from '../../domain/scope.js';
import type { App } from '../../http/app-types.js';
import {
  common,
  type DashboardDeps,
  form,
  hidden,
  type SignedInOptions,
  seeOther,
  sendPage,
} from './dashboard.context.js';
import { DASHBOARD, loginPage } from './layout.js';
import type { DashboardSession } from './users.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in dashboard user of a /dashboard page (never set on the API). */
    dashboard?: DashboardSession;
    /** The session cookie's token, for logout and the mode switch. */
    dashboardToken?: string;
  }
}

export const SESSION_COOKIE = 'kosh_session';
export const LOGIN_CSRF_COOKIE = 'kosh_login_csrf';

/** Session tokens and login CSRF tokens Kosh issues: base64url, 32 and 43 characters long. */
const TOKEN = /^[A-Za-z0-9_-]{16,100}$/;

/**
 * A token from a cookie parsed by @fastify/cookie (registered in the dashboard's scope), or
 * undefined: a missing, malformed, oversized or foreign value is simply no session. When a name
 * appears twice in the header, the parser keeps the first.
 */
export function cookieToken(request: FastifyRequest, name: string): string | undefined {
  const value = request.cookies?.[name];
  return value !== undefined && TOKEN.test(value) ? value : undefined;
}

/**
 * A Set-Cookie line for the dashboard's path. Written here rather than with `reply.setCookie`
 * because the attributes keep the order Kosh has always sent (`…; HttpOnly; SameSite=Strict;
 * Secure`); the values are base64url, so nothing needs encoding.
 */
function setCookieLine(
  name: string,
  value: string,
  options: { secure: boolean; maxAgeSeconds: number },
): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${DASHBOARD}/`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

const LoginBody = Type.Object(
  {
    csrf: Type.String({ maxLength: 200 }),
    email: Type.String({ maxLength: 254 }),
    password: Type.String({ maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const sameText = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Login, logout and the test/live switch; returns the options of every signed-in route: the
 * session from the cookie (or the login page), and on POST the CSRF token.
 */
export function registerSessionRoutes(app: App, deps: DashboardDeps): SignedInOptions {
  const users = deps.services.dashboardUsers;
  const secure = new URL(deps.publicUrl).protocol === 'https:';
  const sessionCookie = (token: string, maxAgeSeconds = deps.sessionIdleSeconds) =>
    setCookieLine(SESSION_COOKIE, token, { secure, maxAgeSeconds });

  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = cookieToken(request, SESSION_COOKIE);
    const session = await users.session(token);
    // No session (none sent, ended, or a cookie Kosh did not issue): every page and every form
    // post goes to the login page.
    if (!session || !token) return seeOther(reply, `${DASHBOARD}/login/`);
    if (request.method === 'POST' && !users.csrfMatches(token, (request.body as { csrf?: unknown })?.csrf)) {
      throw new KoshError('invalid_field', 'The form has expired; reload the page and try again.', 'csrf');
    }
    request.dashboard = session;
    request.dashboardToken = token;
    // Idle expiry restarts with every page.
    reply.header('Set-Cookie', sessionCookie(token));
  };
  const route: SignedInOptions = { ...common, preHandler: signedIn };

  app.get(`${DASHBOARD}/login/`, { ...common, schema: hidden }, async (request, reply) => {
    if (await users.session(cookieToken(request, SESSION_COOKIE))) return seeOther(reply, `${DASHBOARD}/`);
    const csrf = randomBytes(24).toString('base64url');
    reply.header('Set-Cookie', setCookieLine(LOGIN_CSRF_COOKIE, csrf, { secure, maxAgeSeconds: 3_600 }));
    return sendPage(reply, loginPage(csrf));
  });

  app.post(
    `${DASHBOARD}/login/`,
    { ...common, schema: { ...hidden, body: LoginBody } },
    async (request, reply) => {
      const expected = cookieToken(request, LOGIN_CSRF_COOKIE);
      if (!expected || !sameText(expected, request.body.csrf)) {
        throw new KoshError(
          'invalid_field',
          'The login form has expired; reload the page and try again.',
          'csrf',
        );
      }
      let token: string;
      try {
        token = await users.login({
          email: request.body.email,
          password: request.body.password,
          address: request.ip,
        });
      } catch (error) {
        if (!(error instanceof KoshError) || error.code === 'service_unavailable') throw error;
        const status = ERROR_CATALOGUE[error.code].status;
        return sendPage(reply, loginPage(expected, error.message), status);
      }
      reply.header('Set-Cookie', [
        sessionCookie(token),
        setCookieLine(LOGIN_CSRF_COOKIE, '', { secure, maxAgeSeconds: 0 }),
      ]);
      return seeOther(reply, `${DASHBOARD}/`);
    },
  );

  app.post(
    `${DASHBOARD}/logout/`,
    { ...route, schema: { ...hidden, body: form({}) } },
    async (request, reply) => {
      await users.logout(request.dashboardToken as string);
      reply.header('Set-Cookie', sessionCookie('', 0));
      return seeOther(reply, `${DASHBOARD}/login/`);
    },
  );

  app.post(
    `${DASHBOARD}/mode/`,
    {
      ...route,
      schema: {
        ...hidden,
        body: form({ mode: Type.Union([Type.Literal('test'), Type.Literal('live')]) }),
      },
    },
    async (request, reply) => {
      await users.setMode(request.dashboardToken as string, request.body.mode as Mode);
      return seeOther(reply, `${DASHBOARD}/`);
    },
  );

  return route;
}
