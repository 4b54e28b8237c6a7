import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { unixSeconds } from '../../domain/clock.js';

/** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes (the format asks for 24 to 64). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SigningSecrets {
  current: string;
  /** The secret before the last rotation, while its overlap lasts. */
  previous?: string | undefined;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers. During a rotation overlap the signature header carries a
 * `v1,` signature for each secret, space-separated, so receivers holding either secret verify.
 */
export function signWebhook(
  messageId: string,
  timestamp: Date,
  body: string,
  secrets: SigningSecrets,
): WebhookHeaders {
  const signatures = [secrets.current, secrets.previous]
    .filter((secret): secret is string => Boolean(secret))
    .map((secret) => new Webhook(secret).sign(messageId, timestamp, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(unixSeconds(timestamp)),
    'webhook-signature': signatures.join(' '),
  };
}
