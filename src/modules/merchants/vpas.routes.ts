import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, ListQuery, listOf } from '../../http/schemas.js';
import { MidParams } from './merchants.schemas.js';
import type { VpasService } from './vpas.service.js';

const Vpa = Type.Object({
  id: Type.String({ description: '`vpa_` and an opaque suffix' }),
  entity: Type.Literal('vpa'),
  merchant_id: Type.String(),
  address: Type.String({ description: '`<descriptor>.<suffix>@<handle>`' }),
  descriptor: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('suspended')]),
  created_at: Type.Integer(),
});

const GenerateVpaBody = Type.Object(
  {
    descriptor: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9]{3,20}$',
        description: '3–20 lowercase letters and digits; default: from the display name.',
      }),
    ),
  },
  { additionalProperties: false },
);

export function registerVpaRoutes(app: App, vpas: VpasService, keyed: Keyed): void {
  app.post(
    '/v1/api-portal/generate-vpa/:mid/',
    {
      config: { auth: 'partner', idempotency: 'atomic' },
      // The body is optional: no body at all means "all defaults".
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        tags: ['Onboarding'],
        summary: 'Generate a UPI VPA for the merchant',
        description:
          'Globally unique. `active` once the merchant is activated, `pending` before, `suspended` while it is suspended. The body is optional.',
        params: MidParams,
        body: GenerateVpaBody,
        response: {
          200: Type.Object({ data: Vpa, message: Type.String() }),
          ...errorResponses(400, 403, 404, 409, 415),
        },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await vpas.generate(principalOf(request), request.params.mid, request.body, work.db),
        message: 'VPA generated.',
      })),
  );

  app.get(
    '/v1/api-portal/merchants/:mid/vpas/',
    {
      config: { auth: 'partner' },
      schema: {
        tags: ['Onboarding'],
        summary: 'List the merchant’s VPAs, newest first',
        params: MidParams,
        querystring: ListQuery,
        response: { 200: listOf(Vpa), ...errorResponses(400, 403, 404) },
      },
    },
    async (request) => vpas.list(principalOf(request), request.params.mid, request.query),
  );
}
