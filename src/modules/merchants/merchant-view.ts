import type { Queryable } from '../../db/db.js';
import { unixSeconds } from '../../domain/clock.js';
import type { DocumentsRepo } from './documents.repo.js';
import { maskAccountNumber } from './kyc-formats.js';
import type { BankAccount, Merchant } from './merchants.model.js';
import type { BankAccountRow, MerchantsRepo, ProfileRow } from './merchants.repo.js';
import { computeRequirements } from './requirements.js';

/** The bank account as any response or event shows it: the number masked to its last four digits. */
export function toBankAccount(row: BankAccountRow): BankAccount {
  return {
    account_number: maskAccountNumber(row.account_number),
    last4: row.account_number.slice(-4),
    ifsc: row.ifsc,
    bank_name: row.bank_name,
    beneficiary_name: row.beneficiary_name,
    account_type: row.account_type,
    status: row.status,
    failure_reason: row.failure_reason,
  };
}

/** jsonb does not keep key order; show the address in the order it is written. */
function orderedAddress(address: Record<string, string>): Record<string, string> {
  const ordered: Record<string, string> = {};
  for (const key of ['line1', 'line2', 'city', 'state', 'postal_code', 'country']) {
    if (address[key] !== undefined) ordered[key] = address[key];
  }
  return ordered;
}

/** Loads what the merchant view needs for several profiles at once (two queries, whatever the count). */
export async function merchantViews(
  db: Queryable,
  repos: { merchants: MerchantsRepo; documents: DocumentsRepo },
  profiles: ProfileRow[],
): Promise<Merchant[]> {
  if (profiles.length === 0) return [];
  const ids = profiles.map((profile) => profile.account_id);
  const banks = new Map(
    (await repos.merchants.findBankAccounts(db, ids)).map((row) => [row.account_id, row]),
  );
  const summaries = await repos.documents.typeSummary(db, ids);
  return profiles.map((profile) => {
    const mine = summaries.filter((summary) => summary.account_id === profile.account_id);
    const bank = banks.get(profile.account_id);
    return {
      id: profile.account_id,
      entity: 'merchant',
      status: profile.status,
      mode: profile.mode,
      legal_name: profile.legal_name,
      display_name: profile.display_name,
      email: profile.email,
      contact: profile.contact,
      business_type: profile.business_type,
      business_category: profile.business_category,
      business_subcategory: profile.business_subcategory,
      website: profile.website,
      address: orderedAddress(profile.address),
      pan: profile.pan,
      gstin: profile.gstin,
      bank_account: bank ? toBankAccount(bank) : null,
      requirements: computeRequirements({
        reviewNote: profile.status === 'needs_clarification' ? profile.review_note : null,
        businessType: profile.business_type,
        hasGstin: profile.gstin !== null,
        bankStatus: bank?.status,
        bankFailureReason: bank?.failure_reason ?? null,
        documentTypes: new Set(mine.filter((row) => row.usable).map((row) => row.document_type)),
        rejectedTypes: new Set(mine.filter((row) => row.rejected).map((row) => row.document_type)),
      }),
      activated_at: profile.activated_at ? unixSeconds(profile.activated_at) : null,
      created_at: unixSeconds(profile.created_at),
    };
  });
}

export async function merchantView(
  db: Queryable,
  repos: { merchants: MerchantsRepo; documents: DocumentsRepo },
  profile: ProfileRow,
): Promise<Merchant> {
  const [view] = await merchantViews(db, repos, [profile]);
  return view!;
}
