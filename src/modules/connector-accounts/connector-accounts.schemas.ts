import { type Static, Type } from 'typebox';
import { PROVIDER_NAMES, PROVIDERS, type ProviderName } from '../../connectors/registry.js';
import type { Same } from '../../http/schemas.js';
import type {
  ConnectorAccount as ConnectorAccountView,
  CreateConnectorAccount,
} from './connector-accounts.model.js';

/** The providers and their credential fields, as the registry lists them (never typed again here). */
const providerList = PROVIDER_NAMES.map((name) => `\`${name}\``).join(' or ');
const credentialFields = PROVIDER_NAMES.map((name) => {
  const kind = PROVIDERS[name];
  return `${kind.label}: \`{ ${[...kind.publicFields, ...kind.secretFields].join(', ')} }\`.`;
}).join(' ');

export const CreateConnectorAccountBody = Type.Object(
  {
    connector: Type.Unsafe<ProviderName>({
      type: 'string',
      enum: PROVIDER_NAMES,
      description: `The payment provider: ${providerList}.`,
    }),
    credentials: Type.Unsafe<Record<string, string>>({
      type: 'object',
      maxProperties: 10,
      additionalProperties: { type: 'string', maxLength: 500 },
      description: `${credentialFields} Secrets are stored encrypted and never shown again.`,
    }),
  },
  { additionalProperties: false },
);
export type CreateConnectorAccountBody = Static<typeof CreateConnectorAccountBody>;

export const ConnectorAccount = Type.Object({
  id: Type.String({ description: '`ca_` and an opaque suffix' }),
  entity: Type.Literal('connector_account'),
  connector: Type.Unsafe<ProviderName>(Type.Union(PROVIDER_NAMES.map((name) => Type.Literal(name)))),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  webhook_url: Type.String({ description: "Register this address for webhooks in the provider's dashboard" }),
  credentials: Type.Unsafe<Record<string, string>>({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The public credential fields as given, and `<secret>_last4` for each secret',
  }),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  disabled_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix time in seconds, once disabled',
  }),
  methods: Type.Union(
    [
      Type.Object({
        netbanking: Type.Record(Type.String(), Type.String(), { description: 'Bank code → customer label' }),
        wallet: Type.Record(Type.String(), Type.String(), { description: 'Wallet code → customer label' }),
      }),
      Type.Null(),
    ],
    {
      description:
        "The live banks and wallets offered through this account (as `GET /v1/payments/methods/` lists them): the merchant's live methods that the provider takes; until the merchant's partner chooses them, every bank and wallet of the Kosh catalogue that the provider takes. Null once disabled.",
    },
  ),
});
export type ConnectorAccount = Static<typeof ConnectorAccount>;

// The service takes and returns the domain types of connector-accounts.model.ts; these fail the
// typecheck when a schema here and its domain type part.
const _createConnectorAccount: Same<CreateConnectorAccountBody, CreateConnectorAccount> = true;
const _connectorAccount: Same<ConnectorAccount, ConnectorAccountView> = true;
