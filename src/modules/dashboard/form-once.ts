import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { fingerprintOf } from '../../http/idempotency.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import type { DashboardSession } from './users.service.js';

/**
 * One rendering of a form that makes something (a refund) makes it at most once, however often and
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
      const result = await idempotency.execute(
        session.scope,
        key,
        fingerprint,
        // The action may call a provider: never inside a transaction.
        'phased',
        async (claimed) => ({
          status: 303,
          headers: { location: await work(claimed.ids) },
          body: Buffer.alloc(0),
        }),
        { retainSeconds: form.retainSeconds },
      );
      return result.response.headers.location as string;
    } catch (error) {
      if (!(error instanceof KoshError)) throw error;
      if (error.code === 'idempotency_key_reused') {
        throw new KoshError(
          'idempotency_key_reused',
          'This form was already sent with other values, and nothing more was done; reload the page to start again.',
        );
      }
      if (error.code !== 'idempotency_key_in_use') throw error;
      if (waited >= WAIT_MS) return form.busy;
    }
    await sleep(WAIT_STEP_MS);
  }
}
