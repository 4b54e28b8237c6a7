import type { BusinessType } from './kyc-formats.js';

export const DOCUMENT_TYPES = [
  'pan',
  'gst_certificate',
  'cancelled_cheque',
  'incorporation_certificate',
  'address_proof',
  'partnership_deed',
  'trust_deed',
  'society_registration_certificate',
  'ngo_registration_certificate',
  'bank_statement',
] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/**
 * The KYC documents each business type must upload before review: the PAN (the business's, or
 * the person's for individuals and proprietors), a proof of address, and the document that
 * constitutes the entity. A GSTIN given on creation also asks for its GST certificate.
 */
export const REQUIRED_DOCUMENTS: Readonly<Record<BusinessType, readonly DocumentType[]>> = {
  individual: ['pan', 'address_proof'],
  proprietorship: ['pan', 'address_proof'],
  partnership: ['pan', 'address_proof', 'partnership_deed'],
  llp: ['pan', 'address_proof', 'incorporation_certificate'],
  private_limited: ['pan', 'address_proof', 'incorporation_certificate'],
  public_limited: ['pan', 'address_proof', 'incorporation_certificate'],
  trust: ['pan', 'address_proof', 'trust_deed'],
  society: ['pan', 'address_proof', 'society_registration_certificate'],
  ngo: ['pan', 'address_proof', 'ngo_registration_certificate'],
};

export function requiredDocuments(businessType: BusinessType, hasGstin: boolean): DocumentType[] {
  const documents = [...REQUIRED_DOCUMENTS[businessType]];
  if (hasGstin) documents.push('gst_certificate');
  return documents;
}

export interface RequirementError {
  requirement: string;
  code: string;
  reason: string;
}

export interface Requirements {
  /** What must still be provided before the merchant can go to review, e.g. `kyc_document.pan`. */
  currently_due: string[];
  /** Why something provided did not count (a failed bank verification, a rejected document). */
  errors: RequirementError[];
}

export function computeRequirements(input: {
  businessType: BusinessType;
  hasGstin: boolean;
  bankStatus: 'pending' | 'verified' | 'failed' | undefined;
  bankFailureReason: string | null;
  /** Document types with at least one document that is not rejected. */
  documentTypes: ReadonlySet<string>;
  rejectedTypes: ReadonlySet<string>;
  /** The reviewer's question while the merchant needs clarification. */
  reviewNote: string | null;
}): Requirements {
  const due: string[] = [];
  const errors: RequirementError[] = [];
  if (input.reviewNote !== null) {
    errors.push({ requirement: 'review', code: 'needs_clarification', reason: input.reviewNote });
  }
  if (input.bankStatus === undefined || input.bankStatus === 'failed') due.push('bank_details');
  if (input.bankStatus === 'failed') {
    errors.push({
      requirement: 'bank_details',
      code: input.bankFailureReason ?? 'verification_failed',
      reason: 'The bank account could not be verified; submit corrected bank details.',
    });
  }
  for (const type of requiredDocuments(input.businessType, input.hasGstin)) {
    if (input.documentTypes.has(type)) continue;
    due.push(`kyc_document.${type}`);
    if (input.rejectedTypes.has(type)) {
      errors.push({
        requirement: `kyc_document.${type}`,
        code: 'document_rejected',
        reason: 'The document was rejected; upload a new one.',
      });
    }
  }
  return { currently_due: due, errors };
}
