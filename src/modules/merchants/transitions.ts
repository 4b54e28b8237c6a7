import type { AccountStatus } from '../accounts/accounts.model.js';

/**
 * Every onboarding status change, as data. `submit` happens by itself once nothing is due (and
 * again after a clarification, at the partner's next submission); `activate`, `clarify` and
 * `suspend` are operator decisions (`activate` is automatic in test mode).
 */
export const MERCHANT_TRANSITIONS = {
  submit: { from: ['created', 'needs_clarification'], to: 'under_review' },
  activate: { from: ['under_review', 'needs_clarification', 'suspended'], to: 'activated' },
  clarify: { from: ['under_review'], to: 'needs_clarification' },
  suspend: { from: ['created', 'under_review', 'needs_clarification', 'activated'], to: 'suspended' },
} as const satisfies Record<string, { from: readonly AccountStatus[]; to: AccountStatus }>;

export type MerchantAction = keyof typeof MERCHANT_TRANSITIONS;

export function canTransition(action: MerchantAction, from: AccountStatus): boolean {
  return (MERCHANT_TRANSITIONS[action].from as readonly AccountStatus[]).includes(from);
}
