import { expect } from 'vitest';
import type { Harness, TestAccount } from '../helpers/harness.js';

/**
 * Remembers every credential a security suite used, so its last test can check that the logs of
 * the whole suite hold none of them.
 */
export class SecretLedger {
  private readonly secrets = new Set<string>();

  add(...accounts: TestAccount[]): void {
    for (const account of accounts) {
      this.secrets.add(account.credentials.secret_key);
      this.secrets.add(account.auth);
      this.secrets.add(account.auth.slice('Basic '.length));
    }
  }

  addValue(value: string): void {
    this.secrets.add(value);
  }

  /** The logs were captured (they mention requests) and contain no secret or Authorization value. */
  expectCleanLogs(harness: Harness): void {
    const logs = harness.logs();
    expect(logs).toContain('"reqId"');
    expect(this.secrets.size).toBeGreaterThan(0);
    for (const secret of this.secrets) expect(logs.includes(secret), 'a secret in the logs').toBe(false);
    expect(/"authorization":"(?!\[redacted\])/i.test(logs)).toBe(false);
  }
}
