import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { ERROR_CATALOGUE, KoshError } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { pageErrorHandler, sendPage } from '../../http/pages.js';
import { fromKoshOrNoPage } from '../../http/request-site.js';
import { IdParams } from '../../http/schemas.js';
import { newNonce } from '../../pages/document.js';
import { renderCheckoutError, renderCheckoutPage, renderStarted } from './checkout.pages.js';
import type { CheckoutForm, CheckoutPageService } from './checkout-page.service.js';

const tags = ['Checkout'];

const PageQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 60, description: 'Narrows the bank list (without script).' })),
  },
  // The link is shared by merchants through messaging apps and email, which append their own
  // parameters (`utm_source`, `fbclid`…): the customer's page ignores them rather than break.
  { additionalProperties: true },
);

const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

/** The page's one form: the choice, the UPI ID for collect, and the customer when the merchant gave none. */
const CheckoutFormBody = Type.Object(
  {
    pay: Type.Optional(
      Type.String({
        maxLength: 60,
        description: '`upi`, `upi_collect`, `bank:<code>` or `wallet:<code>`.',
      }),
    ),
    vpa: text(200),
    name: text(200),
    email: text(300),
    contact: text(40),
  },
  { additionalProperties: false },
);

/** `/checkout/<id>/`: the page's address relative to Kosh, so its forms post to wherever it was opened. */
function pagePath(id: string): string {
  return `/checkout/${encodeURIComponent(id)}/`;
}

/**
 * The customer's hosted checkout page (docs/checkout.md): no key, HTML in and out, the same
 * security headers and Content-Security-Policy as every customer page.
 */
export function registerCheckoutPageRoutes(app: App, service: CheckoutPageService, publicUrl: string): void {
  const publicOrigin = new URL(publicUrl).origin;
  const common = {
    config: { auth: 'none' as const, idempotency: false as const },
    errorHandler: pageErrorHandler(publicOrigin, renderCheckoutError),
  };

  const show = async (
    reply: FastifyReply,
    id: string,
    options: Parameters<typeof renderCheckoutPage>[3] = {},
  ): Promise<FastifyReply> => {
    const view = await service.view(id);
    const nonce = newNonce();
    return sendPage(reply, renderCheckoutPage(view, nonce, pagePath(id), options), nonce, publicOrigin);
  };

  app.get(
    '/checkout/:id/',
    {
      ...common,
      schema: {
        tags,
        summary: 'Hosted checkout page (browser)',
        description:
          'The customer’s page of a checkout session (`data.url`): UPI, net banking and wallets as the session allows. A completed session shows that the order is paid, with a link back to the merchant (the captured payment’s signed return); an expired one answers 410, and an open one of a merchant that cannot take payments now (suspended) 403.',
        security: [],
        params: IdParams,
        querystring: PageQuery,
        produces: ['text/html'],
      },
    },
    async (request, reply) => show(reply, request.params.id, { query: request.query.q ?? '' }),
  );

  app.post(
    '/checkout/:id/',
    {
      ...common,
      schema: {
        tags,
        summary: 'Start a payment from the hosted checkout page (browser)',
        description:
          'The page’s form. Starts one payment through the same core as `POST /v1/payments/create/s2s/` and sends the browser on to it; a refusal shows the page again with the field marked.',
        security: [],
        params: IdParams,
        body: CheckoutFormBody,
        consumes: ['application/x-www-form-urlencoded'],
        produces: ['text/html'],
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const form = request.body as CheckoutForm;
      if (!fromKoshOrNoPage(request.headers, publicOrigin)) {
        const nonce = newNonce();
        const refused = renderCheckoutError(403, 'A payment can be started only from its own page.', nonce);
        return sendPage(reply, refused, nonce, publicOrigin);
      }
      try {
        const step = await service.start(id, form, request.headers['user-agent'] ?? null);
        const nonce = newNonce();
        return sendPage(reply, renderStarted(step, nonce), nonce, publicOrigin);
      } catch (error) {
        if (!(error instanceof KoshError)) throw error;
        const status = ERROR_CATALOGUE[error.code].status;
        // A closed session shows its own page (paid: 409 with the way back; expired: 410); a missing one, 404.
        if (status >= 500 || error.code === 'resource_not_found') throw error;
        if (error.code === 'checkout_session_closed') return show(reply, id, { status: 409 });
        return show(reply, id, {
          form,
          status,
          error: { message: error.message, field: error.field ?? null },
        });
      }
    },
  );
}
