import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../src/connectors/sandbox/catalogue.js';
import { createSandboxConnector, sandboxInstrument } from '../../src/connectors/sandbox/sandbox.connector.js';

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

  it('answers each choice with its outcome and never calls out', async () => {
    const connector = createSandboxConnector();
    const payment = {
      id: 'pay_x',
      mode: 'test' as const,
      amount: 100,
      currency: 'INR',
      method: 'wallet' as const,
      code: 'payzapp',
    };
    expect(await connector.initiate(payment)).toEqual({ action: 'redirect' });
    expect(await connector.authenticate(payment, 'success')).toEqual({ status: 'captured' });
    expect(await connector.authenticate(payment, 'failure')).toMatchObject({
      status: 'failed',
      errorCode: 'payment_declined',
    });
    expect(await connector.authenticate(payment, 'cancel')).toMatchObject({
      status: 'failed',
      errorCode: 'payment_cancelled',
    });
    expect(await connector.status(payment)).toEqual({ status: 'pending' });
  });
});
