import { type Static, type TLiteral, type TSchema, Type } from 'typebox';
import type { Same } from '../../http/schemas.js';
import { BUSINESS_TYPES, type BusinessType } from './kyc-formats.js';
import type {
  Address as AddressView,
  BankAccount as BankAccountView,
  BankDetails,
  CreateMerchant,
  Merchant as MerchantView,
  MethodToggles,
} from './merchants.model.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const Code = Type.String({ pattern: '^[a-z][a-z0-9_]{1,49}$', maxLength: 50 });

export const Address = Type.Object(
  {
    line1: Type.String({ minLength: 1, maxLength: 100 }),
    line2: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    city: Type.String({ minLength: 1, maxLength: 50 }),
    state: Type.String({ minLength: 2, maxLength: 50 }),
    postal_code: Type.String({ pattern: '^[1-9][0-9]{5}$', description: 'Six-digit PIN code' }),
    country: Type.Literal('IN', { description: 'Only India (IN) for now.' }),
  },
  { additionalProperties: false },
);
export type Address = Static<typeof Address>;

export const CreateMerchantBody = Type.Object(
  {
    legal_name: Type.String({
      minLength: 2,
      maxLength: 200,
      description: 'Name as registered (on the PAN).',
    }),
    display_name: Type.String({
      minLength: 2,
      maxLength: 100,
      description: 'Name customers see on payment pages; also the account name.',
    }),
    email: Type.String({ maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$' }),
    contact: Type.String({ pattern: '^\\+?[1-9][0-9]{7,14}$', description: 'Phone number, E.164 digits.' }),
    // The cast only tells the type system what the mapped array holds: a union over a plain array
    // has the static type never.
    business_type: Type.Union(BUSINESS_TYPES.map((type) => Type.Literal(type)) as [TLiteral<BusinessType>]),
    business_category: Code,
    business_subcategory: Code,
    website: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'An https URL on a public host name, written as a browser reads it: no IP address, no single-label, private-network or special-use name (.local, .internal, .test, .example …).',
      }),
    ),
    address: Address,
    pan: Type.String({ pattern: '^[A-Z]{5}[0-9]{4}[A-Z]$', description: 'Business PAN, AAAAA9999A.' }),
    gstin: Type.Optional(
      Type.String({
        minLength: 15,
        maxLength: 15,
        description: 'Required for private/public limited companies and LLPs.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateMerchantBody = Static<typeof CreateMerchantBody>;

export const BankAccount = Type.Object({
  account_number: Type.String({ description: 'Masked: only the last four digits are shown.' }),
  last4: Type.String(),
  ifsc: Type.String(),
  bank_name: Type.String(),
  beneficiary_name: Type.String(),
  account_type: Type.Union([Type.Literal('savings'), Type.Literal('current')]),
  status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('failed')]),
  failure_reason: Nullable(Type.String()),
});
export type BankAccount = Static<typeof BankAccount>;

export const MerchantStatus = Type.Union([
  Type.Literal('created'),
  Type.Literal('under_review'),
  Type.Literal('needs_clarification'),
  Type.Literal('activated'),
  Type.Literal('suspended'),
]);

export const Merchant = Type.Object({
  id: Type.String({ description: '`mid_` and an opaque suffix' }),
  entity: Type.Literal('merchant'),
  status: MerchantStatus,
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  legal_name: Type.String(),
  display_name: Type.String(),
  email: Type.String(),
  contact: Type.String(),
  business_type: Type.String(),
  business_category: Type.String(),
  business_subcategory: Type.String(),
  website: Nullable(Type.String()),
  address: Type.Record(Type.String(), Type.String()),
  pan: Type.String(),
  gstin: Nullable(Type.String()),
  bank_account: Nullable(BankAccount),
  requirements: Type.Object({
    currently_due: Type.Array(Type.String()),
    errors: Type.Array(
      Type.Object({ requirement: Type.String(), code: Type.String(), reason: Type.String() }),
    ),
  }),
  activated_at: Nullable(Type.Integer()),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
});
export type Merchant = Static<typeof Merchant>;

export const Credentials = Type.Object({
  api_key: Type.String(),
  secret_key: Type.String({ description: 'Shown once; Kosh keeps only a keyed hash.' }),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
});

export const CreatedMerchant = Type.Intersect([Merchant, Type.Object({ credentials: Credentials })]);

export const BankDetailsBody = Type.Object(
  {
    account_number: Type.String({ pattern: '^[0-9]{9,18}$', description: '9 to 18 digits' }),
    ifsc: Type.String({ pattern: '^[A-Z]{4}0[A-Z0-9]{6}$', description: 'AAAA0XXXXXX' }),
    beneficiary_name: Type.String({ minLength: 2, maxLength: 120 }),
    account_type: Type.Union([Type.Literal('savings'), Type.Literal('current')]),
  },
  { additionalProperties: false },
);
export type BankDetailsBody = Static<typeof BankDetailsBody>;

export const KeysBody = Type.Object(
  { mode: Type.Union([Type.Literal('test'), Type.Literal('live')]) },
  { additionalProperties: false },
);

const Toggles = Type.Record(Type.String({ maxLength: 20 }), Type.Boolean(), { maxProperties: 100 });

export const MethodsBody = Type.Object(
  {
    netbanking: Type.Optional(Toggles),
    wallet: Type.Optional(Toggles),
    upi: Type.Optional(
      Type.Object(
        {
          intent: Type.Optional(Type.Boolean({ description: 'UPI intent links and QR codes' })),
          collect: Type.Optional(Type.Boolean({ description: 'UPI collect requests (where still allowed)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type MethodsBody = Static<typeof MethodsBody>;

export const Category = Type.Object({
  code: Type.String(),
  name: Type.String(),
  subcategories: Type.Array(Type.Object({ code: Type.String(), name: Type.String() })),
});

export const MidParams = Type.Object({ mid: Type.String({ maxLength: 100 }) });

// The service takes and returns the domain types of merchants.model.ts; these fail the typecheck
// when a schema here and its domain type part.
const _address: Same<Address, AddressView> = true;
const _createMerchant: Same<CreateMerchantBody, CreateMerchant> = true;
const _bankAccount: Same<BankAccount, BankAccountView> = true;
const _merchant: Same<Merchant, MerchantView> = true;
const _bankDetails: Same<BankDetailsBody, BankDetails> = true;
const _methods: Same<MethodsBody, MethodToggles> = true;
