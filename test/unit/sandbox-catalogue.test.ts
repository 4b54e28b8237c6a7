import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ConnectorPayment } from '../../src/connectors/connector.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import {
  createSandboxConnector,
  SANDBOX_CHOICES,
  SANDBOX_REFUND_FAILS,
  sandboxInstrument,
  sandboxRefundStatus,
  sandboxStatus,
} from '../../src/connectors/sandbox/sandbox.connector.js';

describe('sandbox catalogue', () => {
  const docs = fs.readFileSync(new URL('../../docs/payments.md', import.meta.url), 'utf8');

  it('fixes the seed codes', () => {
    expect(sandboxInstrument('netbanking', 'ICIC')?.action).toBe('html_form');
    expect(sandboxInstrument('netbanking', 'HDFC')?.action).toBe('redirect');
    expect(sandboxInstrument('wallet', 'AIRTELMONEY')?.action).toBe('html_form');
    expect(sandboxInstrument('wallet', 'PAYZAPP')?.action).toBe('redirect');
  });

  it.each([...SANDBOX_BANKS, ...SANDBOX_WALLETS])('$code is documented with its action', (entry) => {
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(docs).toMatch(
      new RegExp(
        `\\|\\s*\`${entry.code}\`\\s*\\|\\s*${literal(entry.label)}\\s*\\|\\s*\`${entry.action}\`\\s*\\|`,
      ),
    );
  });

  const TIMING = { settleSeconds: 60, pendingTimeoutSeconds: 900, refundSeconds: 5 };
  const pendingAt = new Date('2026-01-01T00:00:00Z');
  const payment = (choice: string | undefined, chosen = true): ConnectorPayment => ({
    id: 'pay_x',
    mode: 'test',
    orderId: 'order_x',
    upi: null,
    amount: 100,
    currency: 'INR',
    method: 'wallet',
    code: 'payzapp',
    customer: { name: 'A', email: 'a@example.com', contact: '+919876543210' },
    description: null,
    createdAt: pendingAt,
    callbackUrl: 'http://localhost:3000/v1/payments/pay_x/callback/',
    provider: {
      reference: null,
      status: null,
      data: choice === undefined ? {} : { choice },
      pendingAt: chosen ? pendingAt : null,
    },
  });
  const at = (seconds: number) => new Date(pendingAt.getTime() + seconds * 1000);

  it('starts on the sandbox page with the catalogue action, holding nothing to ask about', async () => {
    const connector = createSandboxConnector({ clock: { now: () => pendingAt }, ...TIMING });
    expect(connector.local).toBe(true);
    expect(await connector.initiate(payment(undefined, false))).toMatchObject({
      outcome: 'started',
      action: 'redirect',
      next: { kind: 'sandbox' },
      reconcile: false,
    });
    expect(await connector.initiate({ ...payment(undefined, false), code: 'airtelmoney' })).toMatchObject({
      action: 'html_form',
    });
  });

  // Every choice, just before and at each moment its answer changes: [seconds after the choice, outcome, error code].
  const TABLE: [string, [number, string, string | undefined][]][] = [
    ['success', [[0, 'captured', undefined]]],
    ['failure', [[0, 'failed', 'payment_declined']]],
    ['cancel', [[0, 'failed', 'payment_cancelled']]],
    [
      'pending_success',
      [
        [0, 'pending', undefined],
        [59, 'pending', undefined],
        [60, 'captured', undefined],
      ],
    ],
    [
      'pending_failure',
      [
        [0, 'pending', undefined],
        [59, 'pending', undefined],
        [60, 'failed', 'payment_declined'],
      ],
    ],
    [
      'late_success',
      [
        [0, 'pending', undefined],
        [900, 'pending', undefined],
        [959, 'pending', undefined],
        [960, 'captured', undefined],
      ],
    ],
  ];

  it('has a row for every choice the page offers', () => {
    expect(TABLE.map(([choice]) => choice)).toEqual([...SANDBOX_CHOICES]);
  });

  it.each(TABLE)('answers %s from the recorded choice and the time since', (choice, rows) => {
    for (const [seconds, outcome, errorCode] of rows) {
      const answer = sandboxStatus(payment(choice), at(seconds), TIMING);
      expect(answer.outcome, `${choice} after ${seconds} s`).toBe(outcome);
      expect(answer.errorCode).toBe(errorCode);
    }
  });

  it('answers not_started before any choice, and for an unknown choice', () => {
    expect(sandboxStatus(payment(undefined, false), at(10), TIMING).outcome).toBe('not_started');
    expect(sandboxStatus(payment('maybe'), at(10), TIMING).outcome).toBe('not_started');
  });

  describe('refunds', () => {
    const refund = (metadata: Record<string, unknown>) => ({
      id: 'rfnd_x',
      paymentId: 'pay_x',
      amount: 100,
      currency: 'INR',
      speed: 'normal' as const,
      metadata,
      createdAt: pendingAt,
      provider: { reference: null, status: null, data: {} },
      payment: payment('success'),
    });

    it.each([
      [5, 0, {}, 'pending'],
      [5, 4.999, {}, 'pending'],
      [5, 5, {}, 'processed'],
      [0, 0, {}, 'processed'],
      [5, 4, { sandbox_refund: 'fail' }, 'pending'],
      [5, 5, { sandbox_refund: 'fail' }, 'failed'],
      [0, 0, { sandbox_refund: 'fail' }, 'failed'],
      [0, 0, { sandbox_refund: 'failed' }, 'processed'],
      [0, 0, { other: 'fail' }, 'processed'],
    ])(
      'KOSH_SANDBOX_REFUND_SECONDS=%s, %s s after it was made, metadata %j: %s',
      (seconds, elapsed, metadata, outcome) => {
        const answer = sandboxRefundStatus(
          refund(metadata),
          new Date(pendingAt.getTime() + elapsed * 1000),
          seconds,
        );
        expect(answer.outcome).toBe(outcome);
        expect(answer.errorCode).toBe(outcome === 'failed' ? 'refund_declined' : undefined);
      },
    );

    it('documents the failure switch', () => {
      const refundsDoc = fs.readFileSync(new URL('../../docs/refunds.md', import.meta.url), 'utf8');
      expect(refundsDoc).toContain(`"${SANDBOX_REFUND_FAILS.key}": "${SANDBOX_REFUND_FAILS.value}"`);
    });
  });
});
