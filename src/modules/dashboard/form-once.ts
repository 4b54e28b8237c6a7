import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { fingerprintOf } from '../../http/idempotency.js';
import type { IdempotencyService, IdempotentResult } from '../idempotency/idempotency.service.js';
import type { DashboardSession } from './users.service.js';

/**
 * One rendering of a form that makes something (a refund, a key, a webhook endpoint) makes it at most once, however often and
 * however fast the form is posted: the page renders a random one-time key in a hidden field, and
 * the action runs under that key as an Idempotency-Key of the session's account and mode
 * (docs/idempotency.md). The key's claim is a row of `idempotency_keys` (one per account, mode and
 * key), so a duplicate is turned away by the database, in every process; the objects the action
 * makes take their ids from the claim, so a post resumed after a crash finds them.
 */

/** The hidden field's name, and its value: 128 random bits, base64url. */
export const FORM_KEY_FIELD = 'form_key';
const FORM_KEY = /^[A-Za-z0-9_-]{22}$/;
export const newFormKey = (): string => randomBytes(16).toString('base64url');
/** The body schema's entry: optional, so that a page rendered without it gets a clear answer. */
export const FormKeyField = { [FORM_KEY_FIELD]: Type.Optional(Type.String({ maxLength: 100 })) };

/** A post made while the first post of its form is still running waits for that one's answer this long. */
const WAIT_MS = 10_000;
const WAIT_STEP_MS = 100;

export interface OnceForm {
  /** Names the action in the key (`dashboard:<action>:<form key>`). */
  action: string;
  /** The posted one-time key. */
  key: string | undefined;
  /** How long the key is kept: at least as long as the form can be posted (its session's maximum age). */
  retainSeconds: number;
  /** Where a post goes when the first post of its form is still running after the wait. */
  busy: string;
}

/** `oncePerForm`'s and `answersOnce`'s answer when the first post is still running after the wait. */
export const BUSY = Symbol('busy');

/**
 * Runs `work` (which answers where to redirect) once per rendering of the form; every later post of
 * that rendering answers the first one's redirect. The same form posted with other values is
 * refused (422), and a form without a key (rendered before forms had one) is refused (400): both
 * change nothing.
 */
export async function oncePerForm(
  idempotency: IdempotencyService,
  request: FastifyRequest,
  session: DashboardSession,
  form: OnceForm,
  work: (ids: IdGenerator) => Promise<string>,
): Promise<string> {
  const stored = await runOnce(idempotency, request, session, form, async (ids) => ({
    status: 303,
    headers: { location: await work(ids) },
    body: Buffer.alloc(0),
  }));
  return stored === BUSY ? form.busy : (stored.headers.location as string);
}

/**
 * Runs `work` once per rendering of the form and answers what it made to every post of that
 * rendering: a double-click that makes a key shows the one key made, with its secret, whichever
 * post the browser shows. The answer is stored encrypted, like every stored Idempotency-Key answer,
 * as long as a session can post (`retainSeconds`). The form names its action (with the object it
 * acts on) and carries the posted one-time key.
 */
export function answersOnce(idempotency: IdempotencyService, retainSeconds: number) {
  return async <T extends object>(
    request: FastifyRequest,
    session: DashboardSession,
    form: { action: string; key: string | undefined },
    work: () => Promise<T>,
  ): Promise<T | typeof BUSY> => {
    const stored = await runOnce(idempotency, request, session, { ...form, retainSeconds }, async () => ({
      status: 200,
      headers: {},
      body: Buffer.from(JSON.stringify(await work()), 'utf8'),
    }));
    return stored === BUSY ? BUSY : (JSON.parse(stored.body.toString('utf8')) as T);
  };
}

type StoredResponse = IdempotentResult['response'];

async function runOnce(
  idempotency: IdempotencyService,
  request: FastifyRequest,
  session: DashboardSession,
  form: Omit<OnceForm, 'busy'>,
  work: (ids: IdGenerator) => Promise<StoredResponse>,
): Promise<StoredResponse | typeof BUSY> {
  if (form.key === undefined || !FORM_KEY.test(form.key)) {
    throw new KoshError(
      'invalid_field',
      'This form is out of date and nothing was done; reload the page and try again.',
      FORM_KEY_FIELD,
    );
  }
  const key = `dashboard:${form.action}:${form.key}`;
  const fingerprint = fingerprintOf(request);
  for (let waited = 0; ; waited += WAIT_STEP_MS) {
    try {
      // The action may call a provider: never inside a transaction.
      const result = await idempotency.execute(
        session.scope,
        key,
        fingerprint,
        'phased',
        (claimed) => work(claimed.ids),
        {
          retainSeconds: form.retainSeconds,
        },
      );
      return result.response;
    } catch (error) {
      if (!(error instanceof KoshError)) throw error;
      if (error.code === 'idempotency_key_reused') {
        throw new KoshError(
          'idempotency_key_reused',
          'This form was already sent with other values, and nothing more was done; reload the page to start again.',
        );
      }
      if (error.code !== 'idempotency_key_in_use') throw error;
      if (waited >= WAIT_MS) return BUSY;
    }
    await sleep(WAIT_STEP_MS);
  }
}
