import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, ListQuery, listOf } from '../../http/schemas.js';
import {
  BankDetailsBody,
  Category,
  CreatedMerchant,
  CreateMerchantBody,
  Credentials,
  KeysBody,
  Merchant,
  MethodsBody,
  MidParams,
} from './merchants.schemas.js';
import type { MerchantsService } from './merchants.service.js';

const partner = { auth: 'partner' as const };
const partnerKeyed = { auth: 'partner' as const, idempotency: 'atomic' as const };
const tags = ['Onboarding'];
const resource = <T extends Parameters<typeof Type.Object>[0][string]>(data: T) =>
  Type.Object({ data, message: Type.String() });

export function registerMerchantRoutes(app: App, merchants: MerchantsService, keyed: Keyed): void {
  app.get(
    '/v1/api-portal/business-categories/',
    {
      config: partner,
      schema: {
        tags,
        summary: 'List business categories and their subcategories',
        description: 'Codes are stable; send them as `business_category` and `business_subcategory`.',
        response: { 200: listOf(Category), ...errorResponses(403) },
      },
    },
    async () => ({
      data: await merchants.listCategories(),
      has_more: false,
      next_cursor: null,
    }),
  );

  app.post(
    '/v1/api-portal/merchants/',
    {
      config: partnerKeyed,
      schema: {
        tags,
        summary: 'Create a merchant',
        description:
          'Creates a merchant owned by the calling partner, in the mode of its key. The response carries the merchant’s test-mode credentials, shown only once, and `requirements.currently_due`.',
        body: CreateMerchantBody,
        response: { 200: resource(CreatedMerchant), ...errorResponses(400, 403, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await merchants.create(principalOf(request), request.body, work.db),
        message: 'Merchant created. Store the secret_key now: it is not shown again.',
      })),
  );

  app.get(
    '/v1/api-portal/merchants/',
    {
      config: partner,
      schema: {
        tags,
        summary: 'List the partner’s merchants, newest first',
        querystring: ListQuery,
        response: { 200: listOf(Merchant), ...errorResponses(400, 403) },
      },
    },
    async (request) => merchants.list(principalOf(request), request.query),
  );

  app.get(
    '/v1/api-portal/merchants/:mid/',
    {
      config: partner,
      schema: {
        tags,
        summary: 'Fetch a merchant',
        params: MidParams,
        response: { 200: resource(Merchant), ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      data: await merchants.get(principalOf(request), request.params.mid),
      message: 'Merchant fetched.',
    }),
  );

  app.post(
    '/v1/api-portal/merchants/bank-details/:mid/',
    {
      config: partnerKeyed,
      schema: {
        tags,
        summary: 'Submit the merchant’s settlement bank account',
        description:
          'The account number is stored and never shown again in full (last four digits only). Test mode simulates the penny-drop check: it fails when `beneficiary_name` contains MISMATCH.',
        params: MidParams,
        body: BankDetailsBody,
        response: { 200: resource(Merchant), ...errorResponses(400, 403, 404, 409, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => {
        const merchant = await merchants.setBankDetails(
          principalOf(request),
          request.params.mid,
          request.body,
          work.db,
        );
        // Operators need to see what happened; the masked number is all a log line may carry.
        request.log.info(
          {
            merchant_id: merchant.id,
            bank_account: merchant.bank_account?.account_number,
            verification: merchant.bank_account?.status,
          },
          'bank details submitted',
        );
        return { data: merchant, message: 'Bank details saved.' };
      }),
  );

  app.post(
    '/v1/api-portal/merchants/:mid/keys/',
    {
      config: partnerKeyed,
      schema: {
        tags,
        summary: 'Issue an API key for the merchant',
        description: 'Live keys need an activated merchant onboarded with a live partner key. Shown once.',
        params: MidParams,
        body: KeysBody,
        response: { 200: resource(Credentials), ...errorResponses(400, 403, 404, 409, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await merchants.issueKey(principalOf(request), request.params.mid, request.body.mode, work.db),
        message: 'Key issued. Store the secret_key now: it is not shown again.',
      })),
  );

  app.patch(
    '/v1/api-portal/merchants/:mid/methods/',
    {
      config: partner,
      schema: {
        tags,
        summary: 'Enable or disable the merchant’s banks, wallets and UPI flows',
        description:
          '`{"netbanking": {"HDFC": false}, "wallet": {"payzapp": true}, "upi": {"intent": true, "collect": false}}`: `true` enables a catalogue code or UPI flow, `false` removes it. Applies to the mode the merchant was onboarded in (for a merchant account made for the partner without onboarding, such as the sandbox merchant, the mode of the partner’s key); `GET /v1/payments/methods/` reflects it (live: as far as the merchant’s connector takes it).',
        params: MidParams,
        body: MethodsBody,
        response: {
          200: resource(
            Type.Object({
              netbanking: Type.Record(Type.String(), Type.String()),
              wallet: Type.Record(Type.String(), Type.String()),
              upi: Type.Object({
                intent: Type.Boolean(),
                collect: Type.Boolean(),
                payer_account_type: Type.Object({
                  bank_account: Type.Boolean(),
                  credit_card: Type.Boolean(),
                }),
              }),
            }),
          ),
          ...errorResponses(400, 403, 404, 415),
        },
      },
    },
    async (request) => {
      const methods = await merchants.updateMethods(principalOf(request), request.params.mid, request.body);
      return {
        data: { netbanking: methods.netbanking, wallet: methods.wallet, upi: methods.upi },
        message: 'Methods updated.',
      };
    },
  );
}
