import { Type } from 'typebox';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses, IdParams, ListQuery, listOf } from '../../http/schemas.js';
import { ConnectorAccount, CreateConnectorAccountBody } from './connector-accounts.schemas.js';
import type { ConnectorAccountsService } from './connector-accounts.service.js';

export function registerConnectorAccountRoutes(
  app: App,
  accounts: ConnectorAccountsService,
  keyed: Keyed,
): void {
  const One = Type.Object({ data: ConnectorAccount, message: Type.String() });

  app.post(
    '/v1/connector-accounts/',
    {
      config: { auth: 'merchant', idempotency: 'atomic' },
      schema: {
        tags: ['Connector accounts'],
        summary: "Add the merchant's own payment provider account (live keys only)",
        description:
          'Live payments go to the active account. Register `webhook_url` at the provider. Secrets are stored encrypted and shown only as their last four characters.',
        body: CreateConnectorAccountBody,
        response: { 200: One, ...errorResponses(400, 403, 409, 415) },
      },
    },
    async (request, reply) =>
      keyed(request, reply, async (work) => ({
        data: await accounts.create(principalOf(request), request.body, work.db),
        message: 'Connector account added.',
      })),
  );

  app.get(
    '/v1/connector-accounts/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Connector accounts'],
        summary: "List the merchant's provider accounts, newest first",
        querystring: ListQuery,
        response: { 200: listOf(ConnectorAccount), ...errorResponses(400, 403) },
      },
    },
    async (request) => accounts.list(principalOf(request), request.query),
  );

  app.get(
    '/v1/connector-accounts/:id/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Connector accounts'],
        summary: 'Fetch a provider account',
        params: IdParams,
        response: { 200: One, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      data: await accounts.get(principalOf(request), request.params.id),
      message: 'Connector account fetched.',
    }),
  );

  app.delete(
    '/v1/connector-accounts/:id/',
    {
      config: { auth: 'merchant' },
      schema: {
        tags: ['Connector accounts'],
        summary: 'Disable a provider account',
        description:
          'New live payments are refused until another account is added; payments it started still settle, and its webhooks are still taken.',
        params: IdParams,
        response: { 200: One, ...errorResponses(403, 404) },
      },
    },
    async (request) => ({
      data: await accounts.disable(principalOf(request), request.params.id),
      message: 'Connector account disabled.',
    }),
  );
}
