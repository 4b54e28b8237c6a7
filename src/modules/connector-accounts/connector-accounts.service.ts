import type { ProviderSettings } from '../../config.js';
import type { Connector } from '../../connectors/connector.js';
import {
  isProviderName,
  PROVIDERS,
  type ProviderKind,
  type ProviderName,
} from '../../connectors/registry.js';
import type { Db, Queryable } from '../../db/db.js';
import { type Clock, unixSeconds } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import { type Page, type PageQuery, pageRequest, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import type { KeyRing } from '../../security/keyring.js';
import { offerable } from '../methods/methods.js';
import type { MethodsService } from '../methods/methods.service.js';
import type { ConnectorAccount, CreateConnectorAccount, LiveMethods } from './connector-accounts.model.js';
import type { ConnectorAccountRow, ConnectorAccountsRepo } from './connector-accounts.repo.js';

/** A credential as providers issue them: printable characters, no spaces. */
const CREDENTIAL = /^[\x21-\x7e]{1,500}$/;

/** The associated data a connector account's secrets are sealed with: they open for it alone. */
export const credentialsContext = (row: Pick<ConnectorAccountRow, 'id' | 'account_id'>) =>
  `connector_account:${row.id}:${row.account_id}`;

/** `{base_url}/v1/connectors/<connector>/webhooks/<id>/`: where the provider sends its webhooks. */
export function providerWebhookUrl(
  publicUrl: string,
  row: Pick<ConnectorAccountRow, 'id' | 'connector'>,
): string {
  return `${publicUrl}/v1/connectors/${row.connector}/webhooks/${row.id}/`;
}

export function toConnectorAccount(
  row: ConnectorAccountRow,
  publicUrl: string,
  methods: LiveMethods | null,
): ConnectorAccount {
  const credentials: Record<string, string> = { ...row.public_credentials };
  for (const [field, hint] of Object.entries(row.secret_hints)) credentials[`${field}_last4`] = hint;
  return {
    id: row.id,
    entity: 'connector_account',
    connector: row.connector as ProviderName,
    status: row.status,
    webhook_url: providerWebhookUrl(publicUrl, row),
    credentials,
    created_at: unixSeconds(row.created_at),
    disabled_at: row.disabled_at ? unixSeconds(row.disabled_at) : null,
    methods,
  };
}

/** Checks the credentials a provider takes: every field it needs, nothing else, each well-formed. */
function checkCredentials(connector: ProviderName, credentials: Record<string, string>): void {
  const kind: ProviderKind = PROVIDERS[connector];
  const known = [...kind.publicFields, ...kind.secretFields];
  for (const field of Object.keys(credentials)) {
    if (!known.includes(field)) {
      throw new KoshError(
        'unknown_field',
        `'${field}' is not a ${connector} credential; send ${known.join(', ')}.`,
        `credentials.${field}`,
      );
    }
  }
  for (const field of known) {
    const value = credentials[field];
    if (value === undefined) {
      throw new KoshError(
        'missing_field',
        `${connector} needs credentials.${field}.`,
        `credentials.${field}`,
      );
    }
    if (!CREDENTIAL.test(value)) {
      throw new KoshError(
        'invalid_field',
        `credentials.${field} must be 1 to 500 printable characters without spaces.`,
        `credentials.${field}`,
      );
    }
  }
}

function requireLive(scope: Pick<Scope, 'mode'>): void {
  if (scope.mode !== 'live') {
    throw new KoshError(
      'live_mode_required',
      'Provider accounts carry live payments only: use a live key. Test mode always uses the sandbox.',
    );
  }
}

/**
 * A merchant's own accounts at payment providers (docs/connectors.md). One active account decides
 * where its live payments go; a disabled one still settles the payments it started. The secret
 * credentials are sealed with the key ring, bound to the account's ids, and never shown again.
 */
export function createConnectorAccountsService(deps: {
  db: Db;
  repo: ConnectorAccountsRepo;
  ids: IdGenerator;
  clock: Clock;
  keyring: KeyRing;
  publicUrl: string;
  methods: Pick<MethodsService, 'get'>;
}) {
  const { db, repo, ids, clock, keyring, publicUrl, methods } = deps;

  /**
   * The account as the API shows it. An active one shows the live methods in effect: the
   * merchant's (until its partner chooses, the whole Kosh catalogue) that its provider takes.
   */
  async function view(row: ConnectorAccountRow, on: Queryable = db): Promise<ConnectorAccount> {
    if (row.status !== 'active' || !isProviderName(row.connector))
      return toConnectorAccount(row, publicUrl, null);
    const offered = offerable(await methods.get(row.account_id, 'live', on), PROVIDERS[row.connector]);
    return toConnectorAccount(row, publicUrl, { netbanking: offered.netbanking, wallet: offered.wallet });
  }

  return {
    async create(scope: Scope, input: CreateConnectorAccount, on: Db = db): Promise<ConnectorAccount> {
      requireLive(scope);
      checkCredentials(input.connector, input.credentials);
      const kind: ProviderKind = PROVIDERS[input.connector];
      const id = ids.next('ca');
      const pick = (fields: readonly string[]) =>
        Object.fromEntries(fields.map((field) => [field, input.credentials[field] as string]));
      const secrets = pick(kind.secretFields);
      const row = { id, account_id: scope.accountId };
      const inserted = await repo.insert(on, {
        ...row,
        connector: input.connector,
        public_credentials: pick(kind.publicFields),
        secret_credentials: keyring.encrypt(JSON.stringify(secrets), credentialsContext(row)),
        secret_hints: Object.fromEntries(
          Object.entries(secrets).map(([field, value]) => [field, value.slice(-4)]),
        ),
        created_at: clock.now(),
      });
      if (inserted) return view(inserted, on);
      const active = await repo.active(on, scope.accountId);
      throw new KoshError(
        'connector_account_active',
        `This merchant's live payments already go to ${active?.id ?? 'another account'}; disable it first (DELETE /v1/connector-accounts/${active?.id ?? '<id>'}/).`,
      );
    },

    async get(scope: Scope, id: string): Promise<ConnectorAccount> {
      requireLive(scope);
      const row = await repo.find(db, scope.accountId, id);
      if (!row) throw notFound('connector account', id);
      return view(row);
    },

    async list(scope: Scope, query: PageQuery): Promise<Page<ConnectorAccount>> {
      requireLive(scope);
      const page = pageRequest('ca', query);
      const rows = toPage(await repo.list(db, scope.accountId, page), page.limit, (row) => row);
      return { ...rows, data: await Promise.all(rows.data.map((row) => view(row))) };
    },

    /** Disables it: new live payments are refused until another is added; started ones still settle. */
    async disable(scope: Scope, id: string): Promise<ConnectorAccount> {
      requireLive(scope);
      const disabled = await repo.disable(db, scope.accountId, id, clock.now());
      if (disabled) return view(disabled);
      const row = await repo.find(db, scope.accountId, id);
      if (!row) throw notFound('connector account', id);
      return view(row);
    },

    /** Whether a provider webhook event was applied before (a redelivery), by the provider's event id. */
    async seenWebhookEvent(connectorAccountId: string, eventId: string): Promise<boolean> {
      return repo.seenEvent(db, connectorAccountId, eventId);
    },

    /** Records a provider webhook event once it was applied. */
    async rememberWebhookEvent(connectorAccountId: string, eventId: string): Promise<void> {
      await repo.rememberEvent(db, connectorAccountId, eventId, clock.now());
    },
  };
}

/** The secret credentials of an account, opened (for its connector only; never shown or logged). */
export function openCredentials(row: ConnectorAccountRow, keyring: KeyRing): Record<string, string> {
  const secrets = JSON.parse(keyring.reveal(row.secret_credentials, credentialsContext(row)));
  return { ...row.public_credentials, ...secrets };
}

/** The connector of a provider account: its provider's, made with its opened credentials. */
export function connectorOf(
  row: ConnectorAccountRow,
  keyring: KeyRing,
  settings: ProviderSettings,
): Connector {
  if (!isProviderName(row.connector)) throw new Error(`Unknown provider '${row.connector}'.`);
  return PROVIDERS[row.connector].create(openCredentials(row, keyring), settings);
}

export type ConnectorAccountsService = ReturnType<typeof createConnectorAccountsService>;
