import { type Static, Type } from 'typebox';
import type { Db } from '../../db/db.js';
import { unixSeconds } from '../../domain/clock.js';
import { notFound } from '../../domain/errors.js';
import type { App } from '../../http/app-types.js';
import { principalOf } from '../../http/auth.js';
import type { Keyed } from '../../http/idempotency.js';
import { errorResponses } from '../../http/schemas.js';
import type { MerchantsService } from '../merchants/merchants.service.js';
import type { ApiKeyRow } from './accounts.repo.js';
import type { AccountsService } from './accounts.service.js';
import type { Principal } from './principal.js';

export const ApiKey = Type.Object({
  api_key: Type.String(),
  entity: Type.Literal('api_key'),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  status: Type.Union([
    Type.Literal('active'),
    Type.Literal('expiring'),
    Type.Literal('expired'),
    Type.Literal('revoked'),
  ]),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  expires_at: Type.Union([Type.Integer(), Type.Null()], { description: 'A rolled key stops at this time' }),
  revoked_at: Type.Union([Type.Integer(), Type.Null()]),
});
export type ApiKey = Static<typeof ApiKey>;

const RollBody = Type.Object(
  {
    overlap_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 604_800,
        description: 'How long the old key keeps working (default 86400, at most 7 days; 0 stops it at once)',
      }),
    ),
  },
  { additionalProperties: false },
);

const Rolled = Type.Object({
  api_key: Type.String(),
  secret_key: Type.String({ description: 'Shown once; Kosh keeps only a keyed hash.' }),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  previous: ApiKey,
});

export function toApiKey(row: ApiKeyRow, now: Date): ApiKey {
  const status = row.revoked_at
    ? 'revoked'
    : row.expires_at && row.expires_at <= now
      ? 'expired'
      : row.expires_at
        ? 'expiring'
        : 'active';
  return {
    api_key: row.api_key,
    entity: 'api_key',
    mode: row.mode,
    status,
    created_at: unixSeconds(row.created_at),
    expires_at: row.expires_at ? unixSeconds(row.expires_at) : null,
    revoked_at: row.revoked_at ? unixSeconds(row.revoked_at) : null,
  };
}

const KeyParams = Type.Object({ key: Type.String({ maxLength: 100 }) });
const MerchantKeyParams = Type.Object({
  mid: Type.String({ maxLength: 100 }),
  key: Type.String({ maxLength: 100 }),
});

/**
 * Key management (docs/api.md): an account lists, rolls and revokes its own keys of the request's
 * mode; a partner does the same for its merchants' keys. A revoked key stops at once in every
 * process; a rolled one keeps working for the overlap its owner chose.
 */
export function registerKeyRoutes(
  app: App,
  deps: { accounts: AccountsService; merchants: MerchantsService; keyed: Keyed; now: () => Date },
): void {
  const tags = ['API keys'];
  const list = (rows: ApiKeyRow[]) => ({
    data: rows.map((row) => toApiKey(row, deps.now())),
    has_more: false,
    next_cursor: null,
  });
  /** The account whose keys the request may manage: its own, or (partner) one of its merchants'. */
  async function ownerOf(principal: Principal, mid?: string, on?: Db) {
    if (mid === undefined) return principal.accountId;
    return (await deps.merchants.get(principal, mid, on)).id;
  }

  const routes = [
    { prefix: '/v1/keys', auth: 'any' as const, summary: "the account's own" },
    { prefix: '/v1/api-portal/merchants/:mid/keys', auth: 'partner' as const, summary: "a merchant's" },
  ];
  for (const route of routes) {
    const merchantScoped = route.prefix.includes(':mid');
    app.get(
      `${route.prefix}/`,
      {
        config: { auth: route.auth },
        schema: {
          tags,
          summary: `List ${route.summary} keys of the request's mode`,
          ...(merchantScoped ? { params: Type.Object({ mid: Type.String({ maxLength: 100 }) }) } : {}),
          response: {
            200: Type.Object({
              data: Type.Array(ApiKey),
              has_more: Type.Boolean(),
              next_cursor: Type.Null(),
            }),
            ...errorResponses(403, 404),
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const owner = await ownerOf(principal, (request.params as { mid?: string }).mid);
        return list(await deps.accounts.listKeys(owner, principal.mode));
      },
    );

    app.post(
      `${route.prefix}/:key/roll/`,
      {
        config: { auth: route.auth, idempotency: 'atomic' },
        schema: {
          tags,
          summary: `Roll one of ${route.summary} keys`,
          description:
            'Issues a new key of the same mode (its secret shown once); the old one keeps working for `overlap_seconds`, then stops.',
          params: merchantScoped ? MerchantKeyParams : KeyParams,
          body: RollBody,
          response: {
            200: Type.Object({ data: Rolled, message: Type.String() }),
            ...errorResponses(400, 403, 404, 409, 415),
          },
        },
      },
      async (request, reply) =>
        deps.keyed(request, reply, async (work) => {
          const principal = principalOf(request);
          const params = request.params as { mid?: string; key: string };
          const owner = await ownerOf(principal, params.mid, work.db);
          // Only a key of the request's mode: a test key never touches live keys.
          const overlap = request.body?.overlap_seconds ?? 86_400;
          const rolled = await deps.accounts.rollKey(owner, params.key, overlap, principal.mode, work.db);
          if (!rolled) throw notFound('key', params.key);
          const { api_key, secret_key, mode } = rolled.credentials;
          return {
            data: { api_key, secret_key, mode, previous: toApiKey(rolled.previous, deps.now()) },
            message: 'Key rolled. Store the secret_key now: it is not shown again.',
          };
        }),
    );

    app.delete(
      `${route.prefix}/:key/`,
      {
        config: { auth: route.auth },
        schema: {
          tags,
          summary: `Revoke one of ${route.summary} keys`,
          description: 'The key stops at once, in every process.',
          params: merchantScoped ? MerchantKeyParams : KeyParams,
          response: {
            200: Type.Object({ data: ApiKey, message: Type.String() }),
            ...errorResponses(403, 404),
          },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const params = request.params as { mid?: string; key: string };
        const owner = await ownerOf(principal, params.mid);
        const revoked = await deps.accounts.revokeKey(owner, params.key, principal.mode);
        if (!revoked) throw notFound('key', params.key);
        return { data: toApiKey(revoked, deps.now()), message: 'Key revoked.' };
      },
    );
  }
}
