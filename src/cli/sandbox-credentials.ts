import fs from 'node:fs';
import path from 'node:path';
import type { Container } from '../container.js';
import { checkDataDirWritable } from '../db/data-dir-lock.js';
import type { Credentials } from '../modules/accounts/accounts.service.js';
import { newPassword } from '../modules/dashboard/passwords.js';

export const CREDENTIALS_FILE = 'sandbox-credentials.json';

/** The sandbox's dashboard logins (their passwords are random, made at the first start). */
export const SANDBOX_LOGINS = { merchant: 'merchant@sandbox.example', partner: 'partner@sandbox.example' };

export interface SandboxAccount extends Credentials {
  dashboard: { email: string; password: string };
}

/**
 * First start on an empty database: the sandbox partner and merchant, a test key and a dashboard
 * login each (one transaction), written to sandbox-credentials.json in the data folder. Undefined
 * when the database already has accounts.
 */
export async function bootstrapSandbox(
  container: Container,
): Promise<{ credentials: { merchant: SandboxAccount; partner: SandboxAccount }; file: string } | undefined> {
  const { accounts, dashboardUsers } = container.services;
  // The secrets are shown once and written after the accounts commit: on a first start, a folder
  // they could not be written to is refused before, or they would be lost.
  if (!(await accounts.hasAccounts())) checkDataDirWritable(container.config.dataDir);
  const logins = {
    merchant: { email: SANDBOX_LOGINS.merchant, password: newPassword() },
    partner: { email: SANDBOX_LOGINS.partner, password: newPassword() },
  };
  const keys = await accounts.bootstrapSandbox(async (tx, created) => {
    await dashboardUsers.createUser({ accountId: created.merchantId, ...logins.merchant }, tx);
    await dashboardUsers.createUser({ accountId: created.partnerId, ...logins.partner }, tx);
  });
  if (!keys) return undefined;
  const credentials = {
    merchant: { ...keys.merchant, dashboard: logins.merchant },
    partner: { ...keys.partner, dashboard: logins.partner },
  };
  return { credentials, file: writeSandboxCredentials(container.config.dataDir, credentials) };
}

/** Writes the first-start credentials where a newcomer or a script can read them (owner-only). */
export function writeSandboxCredentials(
  dataDir: string,
  credentials: { merchant: SandboxAccount; partner: SandboxAccount },
): string {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, CREDENTIALS_FILE);
  const pick = ({ account_id, api_key, secret_key, dashboard }: SandboxAccount) => ({
    account_id,
    api_key,
    secret_key,
    dashboard,
  });
  const body = `${JSON.stringify({ merchant: pick(credentials.merchant), partner: pick(credentials.partner) }, null, 2)}\n`;
  fs.writeFileSync(file, body, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

/** The sandbox credentials of a data folder, when its first start wrote them. */
export function readSandboxCredentials(
  dataDir: string,
): { merchant: SandboxAccount; partner: SandboxAccount } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, CREDENTIALS_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

export function sandboxBanner(
  credentials: { merchant: SandboxAccount; partner: SandboxAccount },
  file: string,
  publicUrl: string,
): string {
  const { merchant, partner } = credentials;
  return [
    '',
    'Kosh created a sandbox for you. These secrets are shown once; they are also in',
    `  ${file} (readable by you only).`,
    '',
    `  merchant  ${merchant.account_id}`,
    `    api_key     ${merchant.api_key}`,
    `    secret_key  ${merchant.secret_key}`,
    `  partner   ${partner.account_id}`,
    `    api_key     ${partner.api_key}`,
    `    secret_key  ${partner.secret_key}`,
    '',
    `Dashboard: ${publicUrl}/dashboard/`,
    `  merchant  ${merchant.dashboard.email}  password ${merchant.dashboard.password}`,
    `  partner   ${partner.dashboard.email}  password ${partner.dashboard.password}`,
    '',
    'Try it:',
    `  curl -u ${merchant.api_key}:${merchant.secret_key} -H 'Content-Type: application/json' \\`,
    `    -d '{"amount": 5000, "currency": "INR"}' ${publicUrl}/v1/orders/`,
    '',
  ].join('\n');
}
