export type Mode = 'test' | 'live';
export type AccountKind = 'merchant' | 'partner';

/** Who is calling: resolved from the API key, handed to services instead of a request. */
export interface Principal {
  accountId: string;
  accountKind: AccountKind;
  accountName: string;
  mode: Mode;
  apiKey: string;
}
