import { describe, expect, it } from 'vitest';
import {
  deadlineOf,
  nextSyncAt,
  SYNC_DELAYS_SECONDS,
  syncDelaySeconds,
  UNANSWERED_FAILURES,
} from '../../src/modules/payments/sync-schedule.js';

const DEADLINES = { expirySeconds: 900, pendingTimeoutSeconds: 900, lateWindowSeconds: 259_200 };
const T0 = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const secondsOf = (date: Date | null) => (date === null ? null : (date.getTime() - T0.getTime()) / 1000);

const subject = (overrides: Partial<Parameters<typeof nextSyncAt>[0]> = {}) => ({
  status: 'pending' as const,
  created_at: T0,
  pending_at: T0,
  error_code: null,
  refund_due: false,
  ...overrides,
});

describe('the reconciler schedule', () => {
  it('starts with short steps and grows to hours, never shrinking, the last step repeating', () => {
    expect(SYNC_DELAYS_SECONDS.slice(0, 3)).toEqual([2, 3, 5]);
    for (let i = 1; i < SYNC_DELAYS_SECONDS.length; i++) {
      expect(SYNC_DELAYS_SECONDS[i]).toBeGreaterThan(SYNC_DELAYS_SECONDS[i - 1] as number);
    }
    const last = SYNC_DELAYS_SECONDS.at(-1);
    expect(syncDelaySeconds(SYNC_DELAYS_SECONDS.length)).toBe(last);
    expect(syncDelaySeconds(1_000)).toBe(last);
    expect(syncDelaySeconds(-1)).toBe(2);
  });

  it('asks a pending payment by the schedule, and at its deadline exactly', () => {
    expect(secondsOf(nextSyncAt(subject(), 0, at(0), DEADLINES))).toBe(2);
    expect(secondsOf(nextSyncAt(subject(), 3, at(100), DEADLINES))).toBe(110);
    // The step would pass the pending timeout (900 s): the deadline comes first.
    expect(secondsOf(nextSyncAt(subject(), 9, at(800), DEADLINES))).toBe(900);
    expect(deadlineOf(subject(), DEADLINES)).toEqual(at(900));
  });

  it('asks a created payment at its expiry deadline at the latest', () => {
    const created = subject({ status: 'created', pending_at: null });
    expect(deadlineOf(created, DEADLINES)).toEqual(at(900));
    expect(secondsOf(nextSyncAt(created, 10, at(890), DEADLINES))).toBe(900);
  });

  it('keeps asking a payment that failed unanswered until the late-authorisation window closes', () => {
    for (const code of UNANSWERED_FAILURES) {
      const failed = subject({ status: 'failed', error_code: code });
      expect(secondsOf(nextSyncAt(failed, 20, at(1_000), DEADLINES))).toBe(1_000 + 21_600);
      expect(secondsOf(nextSyncAt(failed, 20, at(259_000), DEADLINES))).toBe(259_200);
      expect(nextSyncAt(failed, 20, at(259_200), DEADLINES)).toBeNull();
    }
  });

  it('stops asking once the outcome is final: captured, failed by the provider, or a refused authorisation', () => {
    expect(nextSyncAt(subject({ status: 'captured' }), 0, at(10), DEADLINES)).toBeNull();
    for (const code of ['payment_declined', 'payment_cancelled', 'order_already_paid']) {
      expect(nextSyncAt(subject({ status: 'failed', error_code: code }), 0, at(10), DEADLINES)).toBeNull();
    }
    const refused = subject({ status: 'failed', error_code: 'payment_timed_out', refund_due: true });
    expect(nextSyncAt(refused, 0, at(10), DEADLINES)).toBeNull();
  });
});
