import { describe, expect, it } from 'vitest';
import {
  deadlineOf,
  gaveUpAt,
  LATE_STEP_LIMITS,
  lateDelaySeconds,
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
      // Kosh gave up at 900 s (the pending timeout, or the expiry): the step depends on how long ago.
      const failed = subject({ status: 'failed', error_code: code });
      expect(secondsOf(gaveUpAt(failed, DEADLINES))).toBe(900);
      expect(secondsOf(nextSyncAt(failed, 20, at(1_000), DEADLINES))).toBe(1_000 + 300);
      expect(secondsOf(nextSyncAt(failed, 20, at(900 + 3_600), DEADLINES))).toBe(4_500 + 1_800);
      expect(secondsOf(nextSyncAt(failed, 20, at(900 + 6 * 3_600), DEADLINES))).toBe(22_500 + 7_200);
      expect(secondsOf(nextSyncAt(failed, 20, at(900 + 86_400), DEADLINES))).toBe(87_300 + 21_600);
      // The regular schedule when it is shorter (few asks so far).
      expect(secondsOf(nextSyncAt(failed, 3, at(1_000), DEADLINES))).toBe(1_010);
      expect(secondsOf(nextSyncAt(failed, 20, at(259_000), DEADLINES))).toBe(259_200);
      expect(nextSyncAt(failed, 20, at(259_200), DEADLINES)).toBeNull();
    }
  });

  it('asks at least every 5 minutes in the first hour after the timeout, whatever the asks before', () => {
    for (const timeout of [10, 60, 900, 3_600]) {
      const deadlines = { ...DEADLINES, pendingTimeoutSeconds: timeout };
      // Asked by the schedule while pending (unknown answers), then at the timeout itself.
      let now = 0;
      let attempts = 0;
      while (now < timeout) {
        now = secondsOf(nextSyncAt(subject(), attempts, at(now), deadlines)) as number;
        attempts += 1;
      }
      expect(now).toBe(timeout);
      const failed = subject({ status: 'failed', error_code: 'payment_timed_out' });
      const gaps: number[] = [];
      while (now < timeout + 3_600) {
        const next = secondsOf(nextSyncAt(failed, attempts, at(now), deadlines)) as number;
        gaps.push(next - now);
        now = next;
        attempts += 1;
      }
      expect(Math.max(...gaps), `pending timeout ${timeout} s`).toBeLessThanOrEqual(300);
      expect(LATE_STEP_LIMITS[0]).toEqual({ sinceSeconds: 3_600, stepSeconds: 300 });
    }
  });

  it('late steps never grow back and never exceed the regular schedule', () => {
    for (let i = 1; i < LATE_STEP_LIMITS.length; i++) {
      const [before, entry] = [LATE_STEP_LIMITS[i - 1]!, LATE_STEP_LIMITS[i]!];
      expect(entry.sinceSeconds).toBeGreaterThan(before.sinceSeconds);
      expect(entry.stepSeconds).toBeGreaterThan(before.stepSeconds);
    }
    for (const attempts of [0, 5, 10, 30]) {
      for (const since of [0, 100, 3_599, 3_600, 30_000, 100_000]) {
        expect(lateDelaySeconds(attempts, since)).toBeLessThanOrEqual(syncDelaySeconds(attempts));
      }
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
