import type { AccountKind, Scope } from '../../domain/scope.js';

/**
 * Who is calling with an API key, as the accounts module resolves it. The HTTP layer hands the
 * services only its scope (`accountId`, `mode`); the rest says which routes the key may reach.
 */
export interface Principal extends Scope {
  accountKind: AccountKind;
  accountName: string;
  apiKey: string;
}
