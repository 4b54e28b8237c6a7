import type { Queryable } from '../../db/db.js';
import type { PageRequest } from '../../domain/pagination.js';
import type { Mode } from '../../domain/scope.js';
import type { AccountStatus } from '../accounts/accounts.model.js';
import type { BusinessType } from './kyc-formats.js';

export interface ProfileRow {
  account_id: string;
  partner_id: string;
  mode: Mode;
  status: AccountStatus;
  display_name: string;
  legal_name: string;
  email: string;
  contact: string;
  business_type: BusinessType;
  business_category: string;
  business_subcategory: string;
  website: string | null;
  address: Record<string, string>;
  pan: string;
  gstin: string | null;
  review_note: string | null;
  activated_at: Date | null;
  created_at: Date;
}

export interface BankAccountRow {
  account_id: string;
  account_number: string;
  ifsc: string;
  bank_name: string;
  beneficiary_name: string;
  account_type: 'savings' | 'current';
  status: 'pending' | 'verified' | 'failed';
  failure_reason: string | null;
}

export interface CategoryRow {
  code: string;
  name: string;
  subcategories: { code: string; name: string }[];
}

/** The profile joined with its account: the status lives on `accounts`, the name too. */
const PROFILE_SELECT = `SELECT p.account_id, p.partner_id, p.mode, a.status, a.name AS display_name, p.legal_name,
       p.email, p.contact, p.business_type, p.business_category, p.business_subcategory, p.website,
       p.address, p.pan, p.gstin, p.review_note, p.activated_at, p.created_at
  FROM merchant_profiles p JOIN accounts a ON a.id = p.account_id`;

export function createMerchantsRepo() {
  return {
    async listCategories(db: Queryable): Promise<CategoryRow[]> {
      return db.query<CategoryRow>(
        `SELECT c.code, c.name,
                json_agg(json_build_object('code', s.code, 'name', s.name) ORDER BY s.position) AS subcategories
           FROM business_categories c JOIN business_subcategories s ON s.category_code = c.code
          GROUP BY c.code, c.name, c.position ORDER BY c.position`,
      );
    },

    async subcategoryExists(db: Queryable, category: string, subcategory: string): Promise<boolean> {
      const rows = await db.query(
        'SELECT 1 FROM business_subcategories WHERE category_code = $1 AND code = $2',
        [category, subcategory],
      );
      return rows.length === 1;
    },

    async categoryExists(db: Queryable, category: string): Promise<boolean> {
      const rows = await db.query('SELECT 1 FROM business_categories WHERE code = $1', [category]);
      return rows.length === 1;
    },

    async insertProfile(
      tx: Queryable,
      profile: Omit<ProfileRow, 'status' | 'display_name' | 'review_note' | 'activated_at' | 'created_at'> & {
        createdAt: Date;
      },
    ): Promise<void> {
      await tx.query(
        `INSERT INTO merchant_profiles (account_id, partner_id, mode, legal_name, email, contact, business_type,
           business_category, business_subcategory, website, address, pan, gstin, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
        [
          profile.account_id,
          profile.partner_id,
          profile.mode,
          profile.legal_name,
          profile.email,
          profile.contact,
          profile.business_type,
          profile.business_category,
          profile.business_subcategory,
          profile.website,
          profile.address,
          profile.pan,
          profile.gstin,
          profile.createdAt,
        ],
      );
    },

    /** Tenant-scoped: another partner's merchant, or one onboarded in the other mode, is not found. */
    async findProfile(
      db: Queryable,
      partnerId: string,
      mode: Mode,
      merchantId: string,
      forUpdate = false,
    ): Promise<ProfileRow | undefined> {
      const [row] = await db.query<ProfileRow>(
        `${PROFILE_SELECT} WHERE p.account_id = $1 AND p.partner_id = $2 AND p.mode = $3${forUpdate ? ' FOR UPDATE OF p FOR NO KEY UPDATE OF a' : ''}`,
        [merchantId, partnerId, mode],
      );
      return row;
    },

    /** Operator commands act on any merchant. */
    async findProfileById(
      db: Queryable,
      merchantId: string,
      forUpdate = false,
    ): Promise<ProfileRow | undefined> {
      const [row] = await db.query<ProfileRow>(
        `${PROFILE_SELECT} WHERE p.account_id = $1${forUpdate ? ' FOR UPDATE OF p FOR NO KEY UPDATE OF a' : ''}`,
        [merchantId],
      );
      return row;
    },

    async listProfiles(
      db: Queryable,
      partnerId: string,
      mode: Mode,
      page: PageRequest,
    ): Promise<ProfileRow[]> {
      return db.query<ProfileRow>(
        `${PROFILE_SELECT} WHERE p.partner_id = $1 AND p.mode = $2 AND ($3::text IS NULL OR p.account_id < $3)
          ORDER BY p.account_id DESC LIMIT $4`,
        [partnerId, mode, page.cursor ?? null, page.limit + 1],
      );
    },

    async setReviewNote(tx: Queryable, merchantId: string, note: string | null, at: Date): Promise<void> {
      await tx.query('UPDATE merchant_profiles SET review_note = $2, updated_at = $3 WHERE account_id = $1', [
        merchantId,
        note,
        at,
      ]);
    },

    async markActivated(tx: Queryable, merchantId: string, at: Date): Promise<void> {
      await tx.query(
        'UPDATE merchant_profiles SET activated_at = COALESCE(activated_at, $2), updated_at = $2 WHERE account_id = $1',
        [merchantId, at],
      );
    },

    async findBankAccounts(db: Queryable, merchantIds: string[]): Promise<BankAccountRow[]> {
      return db.query<BankAccountRow>(
        `SELECT account_id, account_number, ifsc, bank_name, beneficiary_name, account_type, status, failure_reason
           FROM merchant_bank_accounts WHERE account_id = ANY($1::text[])`,
        [merchantIds],
      );
    },

    async upsertBankAccount(
      tx: Queryable,
      bank: BankAccountRow & { partnerId: string; mode: Mode; at: Date },
    ): Promise<void> {
      await tx.query(
        `INSERT INTO merchant_bank_accounts (account_id, partner_id, mode, account_number, ifsc, bank_name,
           beneficiary_name, account_type, status, failure_reason, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
         ON CONFLICT (account_id) DO UPDATE SET account_number = EXCLUDED.account_number, ifsc = EXCLUDED.ifsc,
           bank_name = EXCLUDED.bank_name, beneficiary_name = EXCLUDED.beneficiary_name,
           account_type = EXCLUDED.account_type, status = EXCLUDED.status,
           failure_reason = EXCLUDED.failure_reason, updated_at = EXCLUDED.updated_at`,
        [
          bank.account_id,
          bank.partnerId,
          bank.mode,
          bank.account_number,
          bank.ifsc,
          bank.bank_name,
          bank.beneficiary_name,
          bank.account_type,
          bank.status,
          bank.failure_reason,
          bank.at,
        ],
      );
    },

    /** On activation the reviewer's verdict covers the pending bank account. */
    async verifyPendingBankAccount(tx: Queryable, merchantId: string, at: Date): Promise<void> {
      await tx.query(
        `UPDATE merchant_bank_accounts SET status = 'verified', updated_at = $2 WHERE account_id = $1 AND status = 'pending'`,
        [merchantId, at],
      );
    },
  };
}

export type MerchantsRepo = ReturnType<typeof createMerchantsRepo>;
