import type { Queryable } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { AccountsService } from '../accounts/accounts.service.js';
import type { EventsService } from '../events/events.service.js';
import type { DocumentsRepo } from './documents.repo.js';
import { merchantView } from './merchant-view.js';
import type { Merchant } from './merchants.model.js';
import type { MerchantsRepo, ProfileRow } from './merchants.repo.js';
import { canTransition, MERCHANT_TRANSITIONS, type MerchantAction } from './transitions.js';
import type { VpasRepo } from './vpas.repo.js';

/**
 * The onboarding status machine. Every change is a compare-and-set on the account's status in
 * the caller's transaction, which also records the `merchant.<status>` event for the owning
 * partner, in the mode the merchant was onboarded in.
 */
export function createOnboarding(deps: {
  accounts: AccountsService;
  events: EventsService;
  clock: Clock;
  repos: { merchants: MerchantsRepo; documents: DocumentsRepo; vpas: VpasRepo };
}) {
  const { accounts, events, clock, repos } = deps;

  async function transition(
    tx: Queryable,
    profile: ProfileRow,
    action: MerchantAction,
    note?: string,
  ): Promise<ProfileRow> {
    const rule = MERCHANT_TRANSITIONS[action];
    if (!canTransition(action, profile.status)) {
      throw new KoshError(
        'state_conflict',
        `The merchant ${profile.account_id} is ${profile.status}; it cannot be ${rule.to === 'activated' ? 'activated' : `moved to ${rule.to}`} from there.`,
      );
    }
    await accounts.transitionStatus(tx, profile.account_id, profile.status, rule.to);
    const now = clock.now();
    // The reviewer's question stands until the merchant goes back to review.
    if (action === 'clarify') await repos.merchants.setReviewNote(tx, profile.account_id, note ?? null, now);
    if (action === 'submit' || action === 'activate') {
      await repos.merchants.setReviewNote(tx, profile.account_id, null, now);
    }
    if (rule.to === 'activated') {
      await repos.merchants.markActivated(tx, profile.account_id, now);
      await repos.merchants.verifyPendingBankAccount(tx, profile.account_id, now);
      await repos.documents.verifyUploaded(tx, profile.account_id, now);
      await repos.vpas.setStatusFor(tx, profile.account_id, ['pending', 'suspended'], 'active', now);
    }
    if (rule.to === 'suspended') {
      await repos.vpas.setStatusFor(tx, profile.account_id, ['active'], 'suspended', now);
    }
    const updated = (await repos.merchants.findProfileById(tx, profile.account_id))!;
    await record(tx, updated, `merchant.${rule.to}`);
    return updated;
  }

  async function record(tx: Queryable, profile: ProfileRow, type: `merchant.${string}`): Promise<Merchant> {
    const view = await merchantView(tx, repos, profile);
    await events.record(tx, {
      accountId: profile.partner_id,
      mode: profile.mode,
      type,
      data: { merchant: view },
    });
    return view;
  }

  return {
    transition,
    record,

    /**
     * Called after every change that can satisfy a requirement: once nothing is due, the merchant
     * goes to review. In test mode the review is simulated and passes at once, so a sandbox
     * merchant is activated in the same transaction.
     */
    async advance(tx: Queryable, profile: ProfileRow): Promise<ProfileRow> {
      if (!canTransition('submit', profile.status)) return profile;
      const view = await merchantView(tx, repos, profile);
      if (view.requirements.currently_due.length > 0) return profile;
      const submitted = await transition(tx, profile, 'submit');
      return profile.mode === 'test' ? transition(tx, submitted, 'activate') : submitted;
    },
  };
}

export type Onboarding = ReturnType<typeof createOnboarding>;
