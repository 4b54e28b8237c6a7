export type Mode = 'test' | 'live';
export type AccountKind = 'merchant' | 'partner';

/**
 * Whose data a unit of work touches: one account in one mode. Every service takes a scope, whoever
 * calls it (the API with a key, the dashboard with a session, the CLI, a job), and every query a
 * service makes filters by both: test and live data never meet.
 */
export interface Scope {
  accountId: string;
  mode: Mode;
}
