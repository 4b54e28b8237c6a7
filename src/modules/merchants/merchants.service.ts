import { SANDBOX_BANKS, SANDBOX_WALLETS } from '../../connectors/sandbox/catalogue.js';
import type { Db, Queryable } from '../../db/db.js';
import type { Clock } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import { type Page, pageRequest, toPage } from '../../domain/pagination.js';
import type { Mode, Scope } from '../../domain/scope.js';
import { shownNameProblem } from '../../domain/text.js';
import { isPublicHostName, readWrittenUrl } from '../../domain/urls.js';
import type { AccountsService, Credentials } from '../accounts/accounts.service.js';
import { type MethodsConfig, upiMethods } from '../methods/methods.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { DocumentsRepo } from './documents.repo.js';
import {
  expectedPanHolderTypes,
  GSTIN_REQUIRED_FOR,
  gstinProblem,
  IFSC_BANKS,
  panFitsBusinessType,
} from './kyc-formats.js';
import { merchantView, merchantViews } from './merchant-view.js';
import type { BankDetails, CreateMerchant, Merchant, MethodToggles } from './merchants.model.js';
import type { CategoryRow, MerchantsRepo, ProfileRow } from './merchants.repo.js';
import type { Onboarding } from './onboarding.js';

/** Test mode's simulated penny drop fails when the beneficiary name contains this word. */
export const PENNY_DROP_MISMATCH_MARKER = 'MISMATCH';

function invalid(field: string, message: string): KoshError {
  return new KoshError('invalid_field', message, field);
}

/** A name people are shown, trimmed: at least `min` characters besides spaces, none misleading. */
function shownName(field: string, value: string, min: number): string {
  const trimmed = value.trim();
  const problem = shownNameProblem(trimmed, min);
  if (problem === 'too_short') {
    throw invalid(field, `${field} must have at least ${min} characters besides spaces.`);
  }
  if (problem === 'misleading') {
    throw invalid(
      field,
      `${field} must not contain control characters (line breaks, tabs) or direction marks.`,
    );
  }
  return trimmed;
}

/**
 * An https URL on a name that can be a public site: no IP address in any notation, no
 * private-network or special-use name (docs/onboarding.md). Judged as the URL parser reads it,
 * and it must be written that way.
 */
function checkWebsite(website: string | undefined): void {
  if (website === undefined) return;
  const { url, problem } = readWrittenUrl(website);
  if (url && (url.protocol !== 'https:' || url.username || url.password || !isPublicHostName(url.hostname))) {
    throw invalid('website', "The field 'website' must be an https URL with a public host name.");
  }
  if (problem !== undefined) throw invalid('website', `The field 'website' ${problem}.`);
}

function checkTaxIds(input: CreateMerchant): void {
  if (!panFitsBusinessType(input.pan, input.business_type)) {
    throw invalid(
      'pan',
      `The 4th character of a ${input.business_type} PAN is ${expectedPanHolderTypes(input.business_type)}; '${input.pan.charAt(3)}' does not fit.`,
    );
  }
  if (input.gstin === undefined) {
    if (GSTIN_REQUIRED_FOR.includes(input.business_type)) {
      throw new KoshError(
        'missing_field',
        `The field 'gstin' is required for business type ${input.business_type}.`,
        'gstin',
      );
    }
    return;
  }
  const problem = gstinProblem(input.gstin, input.pan);
  if (problem) throw invalid('gstin', `The field 'gstin' ${problem}.`);
}

/** A partner-supplied methods change: only catalogue codes, `true` enables, `false` disables. */
function applyToggles(
  current: Record<string, string>,
  toggles: Record<string, boolean> | undefined,
  catalogue: readonly { code: string; label: string }[],
  field: string,
): Record<string, string> {
  const next = { ...current };
  for (const [code, enabled] of Object.entries(toggles ?? {})) {
    const entry = catalogue.find((item) => item.code === code);
    if (!entry) throw invalid(`${field}.${code}`, `'${code}' is not a ${field} code of the Kosh catalogue.`);
    if (enabled) next[code] = entry.label;
    else delete next[code];
  }
  return next;
}

export function createMerchantsService(deps: {
  db: Db;
  clock: Clock;
  accounts: AccountsService;
  methods: MethodsService;
  onboarding: Onboarding;
  repos: { merchants: MerchantsRepo; documents: DocumentsRepo };
}) {
  const { db, clock, accounts, methods, onboarding, repos } = deps;

  /** The partner's own merchant, in the mode of its key; anything else is "not found". */
  async function owned(q: Queryable, scope: Scope, merchantId: string, forUpdate = false) {
    const profile = await repos.merchants.findProfile(q, scope.accountId, scope.mode, merchantId, forUpdate);
    if (!profile) throw notFound('merchant', merchantId);
    return profile;
  }

  /** The account with this id, or undefined when there is none. */
  function accountIfAny(accountId: string) {
    return accounts.getAccount(accountId).catch((error: unknown) => {
      if (error instanceof KoshError && error.code === 'resource_not_found') return undefined;
      throw error;
    });
  }

  /**
   * Whose methods a partner may change, and in which mode: a merchant it onboarded, in the mode it
   * was onboarded in; or a merchant account made for it without onboarding (the sandbox merchant,
   * `kosh merchant create --partner`), in the mode of the partner's key.
   */
  async function methodsOf(
    q: Queryable,
    scope: Scope,
    merchantId: string,
  ): Promise<{ accountId: string; mode: Mode }> {
    const profile = await repos.merchants.findProfile(q, scope.accountId, scope.mode, merchantId, false);
    if (profile) return { accountId: profile.account_id, mode: profile.mode };
    if (!(await repos.merchants.findProfileById(q, merchantId, false))) {
      const account = await accounts.findAccount(q, merchantId);
      if (account?.kind === 'merchant' && account.partner_id === scope.accountId) {
        return { accountId: account.id, mode: scope.mode };
      }
    }
    throw notFound('merchant', merchantId);
  }

  const service = {
    owned,

    async listCategories(): Promise<CategoryRow[]> {
      return repos.merchants.listCategories(db);
    },

    async create(
      scope: Scope,
      input: CreateMerchant,
      on: Db = db,
    ): Promise<Merchant & { credentials: Omit<Credentials, 'account_id'> }> {
      if (!(await repos.merchants.categoryExists(on, input.business_category))) {
        throw invalid('business_category', `'${input.business_category}' is not a business category code.`);
      }
      if (
        !(await repos.merchants.subcategoryExists(on, input.business_category, input.business_subcategory))
      ) {
        throw invalid(
          'business_subcategory',
          `'${input.business_subcategory}' is not a subcategory of '${input.business_category}'.`,
        );
      }
      checkWebsite(input.website);
      checkTaxIds(input);
      const legalName = shownName('legal_name', input.legal_name, 2);
      const displayName = shownName('display_name', input.display_name, 2);
      for (const line of ['line1', 'line2', 'city', 'state'] as const) {
        const value = input.address[line];
        if (value !== undefined) shownName(`address.${line}`, value, 1);
      }
      return on.transaction(async (tx) => {
        const account = await accounts.createAccount(tx, {
          kind: 'merchant',
          name: displayName,
          partnerId: scope.accountId,
          sandbox: scope.mode === 'test',
        });
        await repos.merchants.insertProfile(tx, {
          account_id: account.id,
          partner_id: scope.accountId,
          mode: scope.mode,
          legal_name: legalName,
          email: input.email,
          contact: input.contact,
          business_type: input.business_type,
          business_category: input.business_category,
          business_subcategory: input.business_subcategory,
          website: input.website ?? null,
          address: input.address,
          pan: input.pan,
          gstin: input.gstin ?? null,
          createdAt: clock.now(),
        });
        const { api_key, secret_key, mode } = await accounts.createKey(tx, account.id, 'test');
        const profile = (await repos.merchants.findProfileById(tx, account.id))!;
        const view = await onboarding.record(tx, profile, 'merchant.created');
        return { ...view, credentials: { api_key, secret_key, mode } };
      });
    },

    async get(scope: Scope, merchantId: string, on: Queryable = db): Promise<Merchant> {
      return merchantView(on, repos, await owned(on, scope, merchantId));
    },

    async list(scope: Scope, query: { limit?: number; cursor?: string }): Promise<Page<Merchant>> {
      const page = pageRequest('mid', query);
      const rows = await repos.merchants.listProfiles(db, scope.accountId, scope.mode, page);
      const views = new Map(
        (await merchantViews(db, repos, rows.slice(0, page.limit))).map((view) => [view.id, view]),
      );
      const ids = rows.map((row) => ({ id: row.account_id }));
      return toPage(ids, page.limit, (row) => views.get(row.id)!);
    },

    /**
     * Bank details can be (re)submitted until the merchant goes to review. Test mode simulates the
     * penny drop; live mode leaves the account pending until the operator's review.
     */
    async setBankDetails(
      scope: Scope,
      merchantId: string,
      input: BankDetails,
      on: Db = db,
    ): Promise<Merchant> {
      const bankCode = input.ifsc.slice(0, 4);
      const bankName = IFSC_BANKS[bankCode];
      if (!bankName) throw invalid('ifsc', `The IFSC bank code '${bankCode}' is not a bank Kosh settles to.`);
      const beneficiary = shownName('beneficiary_name', input.beneficiary_name, 2).replace(/\s+/g, ' ');
      const mismatch = beneficiary.toUpperCase().includes(PENNY_DROP_MISMATCH_MARKER);
      return on.transaction(async (tx) => {
        const profile = await owned(tx, scope, merchantId, true);
        if (profile.status !== 'created' && profile.status !== 'needs_clarification') {
          throw new KoshError(
            'state_conflict',
            `Bank details cannot be changed while the merchant is ${profile.status}.`,
          );
        }
        const testMode = profile.mode === 'test';
        await repos.merchants.upsertBankAccount(tx, {
          account_id: profile.account_id,
          partnerId: profile.partner_id,
          mode: profile.mode,
          account_number: input.account_number,
          ifsc: input.ifsc,
          bank_name: bankName,
          beneficiary_name: beneficiary,
          account_type: input.account_type,
          status: testMode ? (mismatch ? 'failed' : 'verified') : 'pending',
          failure_reason: testMode && mismatch ? 'beneficiary_name_mismatch' : null,
          at: clock.now(),
        });
        return merchantView(tx, repos, await onboarding.advance(tx, profile));
      });
    },

    /** Keys for the merchant, shown once. Live keys only once activated, never for a test-mode merchant. */
    async issueKey(
      scope: Scope,
      merchantId: string,
      mode: Mode,
      on: Db = db,
    ): Promise<Omit<Credentials, 'account_id'>> {
      return on.transaction(async (tx) => {
        const profile = await owned(tx, scope, merchantId, true);
        // A suspended merchant's keys do not work: a new one would be a secret that cannot be used.
        if (profile.status === 'suspended') {
          throw new KoshError('state_conflict', 'A suspended merchant cannot get a new key.');
        }
        if (mode === 'live' && profile.mode === 'test') {
          throw new KoshError(
            'account_not_activated',
            'This merchant was onboarded in test mode and can hold only test keys; onboard it with a live partner key.',
          );
        }
        const { api_key, secret_key, mode: keyMode } = await accounts.createKey(tx, profile.account_id, mode);
        return { api_key, secret_key, mode: keyMode };
      });
    },

    /** Enables or disables the merchant's banks and wallets in the mode it was onboarded in. */
    async updateMethods(scope: Scope, merchantId: string, input: MethodToggles): Promise<MethodsConfig> {
      if (input.netbanking === undefined && input.wallet === undefined && input.upi === undefined) {
        throw new KoshError(
          'invalid_body',
          'Send netbanking and/or wallet, each an object of code → true|false, and/or upi: {"intent": bool, "collect": bool}.',
        );
      }
      return db.transaction(async (tx) => {
        const target = await methodsOf(tx, scope, merchantId);
        return methods.update(tx, target.accountId, target.mode, (current) => ({
          ...current,
          netbanking: applyToggles(current.netbanking, input.netbanking, SANDBOX_BANKS, 'netbanking'),
          wallet: applyToggles(current.wallet, input.wallet, SANDBOX_WALLETS, 'wallet'),
          upi: upiMethods(input.upi?.intent ?? current.upi.intent, input.upi?.collect ?? current.upi.collect),
        }));
      });
    },

    /** Operator decisions (the `kosh merchant activate|clarify|suspend` commands): any merchant, by id. */
    async operate(
      merchantId: string,
      action: 'activate' | 'clarify' | 'suspend',
      note?: string,
    ): Promise<Merchant> {
      if (action === 'clarify' && !note?.trim()) {
        throw new KoshError('missing_field', 'Say what the merchant must clarify (--reason).', 'reason');
      }
      return db.transaction(async (tx) => {
        const profile = await repos.merchants.findProfileById(tx, merchantId, true);
        if (!profile) throw notFound('merchant', merchantId);
        // Whatever the status activation starts from (a suspension can come before any review),
        // a merchant with requirements due is never activated.
        if (action === 'activate') {
          const due = (await merchantView(tx, repos, profile)).requirements.currently_due;
          if (profile.status === 'created' || due.length > 0) {
            // A suspended merchant takes no submissions, so one suspended with requirements due stays so.
            const stuck =
              profile.status === 'suspended'
                ? ' It was suspended before they were in: it stays suspended.'
                : '';
            throw new KoshError(
              'state_conflict',
              `The merchant ${merchantId} is not ready for activation; still due: ${due.join(', ')}.${stuck}`,
            );
          }
        }
        const updated: ProfileRow = await onboarding.transition(tx, profile, action, note?.trim());
        return merchantView(tx, repos, updated);
      });
    },

    /**
     * The operator's `kosh merchant activate|suspend|clarify`, for every merchant: one a partner
     * onboarded goes through its onboarding review (`operate`); one made by `kosh merchant create`
     * (or the sandbox's) has no review in Kosh, so it is activated or suspended as an account, and
     * `clarify`, which asks about a review, is refused.
     */
    async operateAny(
      merchantId: string,
      action: 'activate' | 'clarify' | 'suspend',
      note?: string,
    ): Promise<{ merchant_id: string; status: string; mode: Mode | null }> {
      if (await repos.merchants.findProfileById(db, merchantId)) {
        const merchant = await service.operate(merchantId, action, note);
        return { merchant_id: merchant.id, status: merchant.status, mode: merchant.mode };
      }
      const account = await accountIfAny(merchantId);
      if (account?.kind !== 'merchant') throw notFound('merchant', merchantId);
      if (action === 'clarify') {
        throw new KoshError(
          'state_conflict',
          `The merchant ${merchantId} was not onboarded through a partner, so it has no review to ask about: activate or suspend it.`,
        );
      }
      const to = action === 'activate' ? 'activated' : 'suspended';
      if (account.status === to)
        throw new KoshError('state_conflict', `The merchant ${merchantId} is ${to} already.`);
      const updated = await db.transaction((tx) =>
        accounts.transitionStatus(tx, merchantId, account.status, to),
      );
      return { merchant_id: updated.id, status: updated.status, mode: null };
    },
  };
  return service;
}

export type MerchantsService = ReturnType<typeof createMerchantsService>;
