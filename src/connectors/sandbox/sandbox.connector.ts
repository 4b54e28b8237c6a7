import type { Clock } from '../../domain/clock.js';
import type { PaymentMethod } from '../../domain/payment-methods.js';
import { asciiLowerCase } from '../../domain/text.js';
import type {
  Connector,
  ConnectorPayment,
  ConnectorRefund,
  RefundResult,
  StatusResult,
} from '../connector.js';
import { upiLink } from '../upi.js';
import { SANDBOX_BANKS, SANDBOX_WALLETS, type SandboxInstrument } from './catalogue.js';

/**
 * The sandbox's UPI payee: not a real VPA (no PSP has the handle `kosh`), so no real UPI app can
 * ever pay a sandbox payment. Kosh's sandbox UPI app (the simulator page) pays it instead.
 */
export const SANDBOX_UPI_PAYEE = { vpa: 'sandbox.payee@kosh', name: 'Kosh Sandbox' } as const;

/**
 * Collect requests to these VPAs settle by themselves KOSH_SANDBOX_SETTLE_SECONDS after the
 * payment is made (approved or declined on the simulated phone); any other VPA waits for the
 * simulator, like intent and QR.
 */
export const SANDBOX_COLLECT_VPAS = { success: 'success@kosh', failure: 'failure@kosh' } as const;

/** Finds a sandbox bank or wallet by code, in any case. */
export function sandboxInstrument(method: PaymentMethod, code: string): SandboxInstrument | undefined {
  const list = method === 'netbanking' ? SANDBOX_BANKS : SANDBOX_WALLETS;
  const wanted = asciiLowerCase(code);
  return list.find((instrument) => asciiLowerCase(instrument.code) === wanted);
}

/**
 * What the customer can choose on the sandbox bank page: the three plain outcomes, and the ones a
 * real bank produces — an answer that stays pending before it settles either way, and an
 * authorisation that comes only after Kosh gave up waiting (the late authorisation).
 */
export const SANDBOX_CHOICES = [
  'success',
  'failure',
  'cancel',
  'pending_success',
  'pending_failure',
  'late_success',
] as const;
export type SandboxChoice = (typeof SANDBOX_CHOICES)[number];

export function isSandboxChoice(value: unknown): value is SandboxChoice {
  return typeof value === 'string' && (SANDBOX_CHOICES as readonly string[]).includes(value);
}

/**
 * The sandbox UPI app's "Let it expire": nothing is sent, so the payment stays `created` until its
 * `expires_at`. Recorded on the payment like the other choices, and as final as they are.
 */
export const SANDBOX_LET_EXPIRE = 'expire';

const DECLINED = {
  outcome: 'failed',
  errorCode: 'payment_declined',
  errorReason: 'The bank or wallet declined the payment.',
} as const;
const CANCELLED = {
  outcome: 'failed',
  errorCode: 'payment_cancelled',
  errorReason: 'The customer cancelled the payment.',
} as const;

/**
 * The metadata that makes a sandbox refund fail (docs/refunds.md): `{ "sandbox_refund": "fail" }`.
 * Anything else is processed.
 */
export const SANDBOX_REFUND_FAILS = { key: 'sandbox_refund', value: 'fail' } as const;

/**
 * The simulated bank's answer for a refund: pending until KOSH_SANDBOX_REFUND_SECONDS after it was
 * made, then processed (or failed, when its metadata asks for that). A pure function of the refund
 * and the time, like the payment's.
 */
export function sandboxRefundStatus(refund: ConnectorRefund, now: Date, refundSeconds: number): RefundResult {
  const elapsed = (now.getTime() - refund.createdAt.getTime()) / 1000;
  if (elapsed < refundSeconds)
    return { outcome: 'pending', rawStatus: 'pending', reference: `sbx_${refund.id}` };
  if (refund.metadata[SANDBOX_REFUND_FAILS.key] === SANDBOX_REFUND_FAILS.value) {
    return {
      outcome: 'failed',
      rawStatus: 'failed',
      reference: `sbx_${refund.id}`,
      errorCode: 'refund_declined',
      errorReason: 'The bank refused the refund (sandbox: metadata sandbox_refund = fail).',
    };
  }
  return { outcome: 'processed', rawStatus: 'processed', reference: `sbx_${refund.id}` };
}

export interface SandboxTiming {
  /** How long a pending answer of the simulated bank takes to settle (KOSH_SANDBOX_SETTLE_SECONDS). */
  settleSeconds: number;
  /** Kosh's own pending timeout: a late authorisation arrives this long plus `settleSeconds` after the choice. */
  pendingTimeoutSeconds: number;
  /** How long a sandbox refund stays pending (KOSH_SANDBOX_REFUND_SECONDS; 0 processes it at once). */
  refundSeconds: number;
}

/**
 * The simulated bank's answer for a payment, from the customer's recorded choice and how long ago
 * it was made: a pure function of the payment row and the time, so that asking again (after a
 * crash, from another process) always gives the same answer.
 */
export function sandboxStatus(payment: ConnectorPayment, now: Date, timing: SandboxTiming): StatusResult {
  const choice = payment.provider.data.choice;
  const pendingAt = payment.provider.pendingAt;
  // Let expire: nothing was sent, and nothing settles by itself (not even a collect to success@kosh).
  if (choice === SANDBOX_LET_EXPIRE) return { outcome: 'not_started', rawStatus: SANDBOX_LET_EXPIRE };
  if (!isSandboxChoice(choice) || !pendingAt) return sandboxCollect(payment, now, timing);
  const elapsed = (now.getTime() - pendingAt.getTime()) / 1000;
  // A UPI payment's late success comes after its own deadline (its expires_at), not the pending timeout.
  const lateAfter = payment.upi
    ? Math.max(0, (payment.upi.expiresAt.getTime() - pendingAt.getTime()) / 1000) + timing.settleSeconds
    : timing.pendingTimeoutSeconds + timing.settleSeconds;
  const settled = (after: number, result: StatusResult): StatusResult =>
    elapsed >= after ? result : { outcome: 'pending', rawStatus: `${choice}:pending` };
  switch (choice) {
    case 'success':
      return { outcome: 'captured', rawStatus: 'success' };
    case 'failure':
      return { ...DECLINED, rawStatus: 'failure' };
    case 'cancel':
      return { ...CANCELLED, rawStatus: 'cancel' };
    case 'pending_success':
      return settled(timing.settleSeconds, { outcome: 'captured', rawStatus: 'pending_success:captured' });
    case 'pending_failure':
      return settled(timing.settleSeconds, { ...DECLINED, rawStatus: 'pending_failure:declined' });
    case 'late_success':
      return settled(lateAfter, {
        outcome: 'captured',
        rawStatus: 'late_success:captured',
      });
  }
}

/** The VPA of a sandbox collect request that settles by itself (success@kosh, failure@kosh). */
function settlesBySelf(payment: ConnectorPayment): string | undefined {
  const vpa = payment.upi?.flow === 'collect' ? payment.upi.vpa?.toLowerCase() : undefined;
  return vpa === SANDBOX_COLLECT_VPAS.success || vpa === SANDBOX_COLLECT_VPAS.failure ? vpa : undefined;
}

/** A collect request to `success@kosh` or `failure@kosh` settles by itself; anything else waits. */
function sandboxCollect(payment: ConnectorPayment, now: Date, timing: SandboxTiming): StatusResult {
  const waiting: StatusResult = { outcome: 'not_started', rawStatus: 'awaiting_customer' };
  const vpa = settlesBySelf(payment);
  if (!vpa) return waiting;
  if ((now.getTime() - payment.createdAt.getTime()) / 1000 < timing.settleSeconds) return waiting;
  return vpa === SANDBOX_COLLECT_VPAS.success
    ? { outcome: 'captured', rawStatus: 'collect:approved', payerVpa: vpa }
    : {
        ...DECLINED,
        errorReason: 'The customer declined the collect request.',
        rawStatus: 'collect:declined',
      };
}

/**
 * Test mode's simulated banks and wallets: no network, the action fixed per code by the catalogue,
 * the customer's choice made on Kosh's own sandbox page and recorded on the payment, and the bank's
 * answer worked out from it (`sandboxStatus`). A code the account enabled that is not in the
 * catalogue answers `html_form`.
 */
export function createSandboxConnector(deps: { clock: Clock } & SandboxTiming): Connector {
  return {
    name: 'sandbox',
    local: true,
    async initiate(payment) {
      if (payment.upi) {
        const { flow } = payment.upi;
        return {
          outcome: 'started',
          action: 'upi',
          next: {
            kind: 'upi',
            link:
              flow === 'collect'
                ? null
                : upiLink({
                    payeeVpa: SANDBOX_UPI_PAYEE.vpa,
                    payeeName: SANDBOX_UPI_PAYEE.name,
                    reference: payment.id,
                    amount: payment.amount,
                    note: payment.description ?? `Payment ${payment.id}`,
                  }),
          },
          reference: null,
          rawStatus: 'awaiting_customer',
          // The simulated bank holds nothing until the customer chooses (the sandbox UPI app records
          // the choice and has it asked at once), a collect to success@kosh or failure@kosh settles,
          // or the deadline comes: it is first asked then, not on the reconciler's schedule.
          reconcile: true,
          askAt: settlesBySelf(payment)
            ? new Date(payment.createdAt.getTime() + deps.settleSeconds * 1000)
            : payment.upi.expiresAt,
        };
      }
      return {
        outcome: 'started',
        action: sandboxInstrument(payment.method, payment.code)?.action ?? 'html_form',
        next: { kind: 'sandbox' },
        reference: null,
        rawStatus: 'awaiting_customer',
        // Until the customer chooses, the simulated bank holds nothing to ask about.
        reconcile: false,
      };
    },
    async status(payment) {
      return sandboxStatus(payment, deps.clock.now(), deps);
    },
    async refund(refund) {
      return sandboxRefundStatus(refund, deps.clock.now(), deps.refundSeconds);
    },
    async refundStatus(refund) {
      return sandboxRefundStatus(refund, deps.clock.now(), deps.refundSeconds);
    },
  };
}
