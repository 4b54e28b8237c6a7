import type { ProviderName } from '../../connectors/registry.js';
import type { ConnectorAccountRow } from './connector-accounts.repo.js';

/** What adding a connector account takes: the provider and its credential fields (secrets included). */
export interface CreateConnectorAccount {
  connector: ProviderName;
  credentials: Record<string, string>;
}

/** The connector account as the API shows it: secrets only by their last four characters. */
export interface ConnectorAccount {
  id: string;
  entity: 'connector_account';
  connector: ProviderName;
  status: ConnectorAccountRow['status'];
  /** Where to register the provider's webhooks. */
  webhook_url: string;
  /** The public credential fields as given, and `<secret>_last4` for each secret. */
  credentials: Record<string, string>;
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds, once disabled. */
  disabled_at: number | null;
  /** The live banks and wallets offered through it (code → label); null once it is disabled. */
  methods: LiveMethods | null;
}

/** Bank and wallet codes → customer labels, as in the methods object. */
export interface LiveMethods {
  netbanking: Record<string, string>;
  wallet: Record<string, string>;
}
