import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Container, createContainer } from '../../src/container.js';
import { systemClock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/log.js';
import { sealSecrets } from '../../src/security/sealed-columns.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { proprietorBody } from '../helpers/onboarding.js';

/**
 * `kosh encryption rotate`: after a new key is configured (the old one kept for reading), every
 * stored secret is re-encrypted with the new key, and everything still works without the old one.
 * Plain values stored before encryption existed are sealed at start.
 */
let harness: Harness;
let rotated: Container | undefined;

beforeAll(async () => {
  harness = await createHarness('postgres');
});
// The rotated containers share the harness's database: only the harness closes it.
afterAll(async () => {
  await harness.close();
});

async function ciphertexts(): Promise<string[]> {
  const rows = await harness.container.db.query<{ value: string }>(
    `SELECT secret AS value FROM webhook_endpoints
     UNION ALL SELECT secret FROM return_signing_secrets
     UNION ALL SELECT convert_from(body, 'UTF8') FROM idempotency_keys WHERE state = 'completed'`,
  );
  return rows.map((row) => row.value);
}

it('re-encrypts every stored secret with the new key, and the old key is no longer needed', async () => {
  const merchant = await harness.merchant('Rotation');
  const partner = await harness.partner('Rotation partner');
  const endpoint = await harness.request('POST', '/v1/webhooks/', {
    auth: merchant,
    json: { url: 'http://127.0.0.1:9/hook' },
  });
  const secret = endpoint.json().data.secret as string;
  const rss = (await harness.request('GET', '/v1/payments/return-signing-secret/', { auth: merchant })).json()
    .data.secret as string;
  const keyed = await harness.request('POST', '/v1/api-portal/merchants/', {
    auth: partner,
    json: proprietorBody(),
    headers: { 'idempotency-key': 'rotation-1' },
  });
  const oldKey = harness.container.config.encryptionKey as Buffer;
  const oldId = harness.container.keyring.currentKeyId;
  expect((await ciphertexts()).every((value) => value.startsWith(`enc:v1:${oldId}:`))).toBe(true);

  // A process with the new key and the old one for reading; the rotation re-encrypts everything.
  const newKey = randomBytes(32);
  rotated = await createContainer(
    { ...harness.container.config, encryptionKey: newKey, previousEncryptionKeys: [oldKey] },
    { db: harness.container.db, clock: systemClock, log: createLogger('silent'), migrate: false },
  );
  const count = await sealSecrets(rotated.db, rotated.keyring, { rotate: true });
  expect(count).toBeGreaterThanOrEqual(3);
  const newId = rotated.keyring.currentKeyId;
  expect(newId).not.toBe(oldId);
  expect((await ciphertexts()).every((value) => value.startsWith(`enc:v1:${newId}:`))).toBe(true);
  // A second run has nothing left to do.
  expect(await sealSecrets(rotated.db, rotated.keyring, { rotate: true })).toBe(0);

  // Without the old key, every secret still reads back through the new one.
  rotated = await createContainer(
    { ...harness.container.config, encryptionKey: newKey, previousEncryptionKeys: [] },
    { db: harness.container.db, clock: systemClock, log: createLogger('silent'), migrate: false },
  );
  const [row] = await rotated.db.query<{ secret: string }>(
    'SELECT secret FROM webhook_endpoints WHERE id = $1',
    [endpoint.json().data.id],
  );
  expect(rotated.keyring.decryptText(row!.secret, `webhook_endpoint:${endpoint.json().data.id}`)).toBe(
    secret,
  );
  expect(await rotated.services.payments.returnSigningSecret(merchant.id, 'test')).toBe(rss);
  expect(keyed.statusCode).toBe(200);
});

it('seals secrets stored in plain text when it starts', async () => {
  const merchant = await harness.merchant('Legacy');
  const created = await harness.request('POST', '/v1/webhooks/', {
    auth: merchant,
    json: { url: 'http://127.0.0.1:9/legacy' },
  });
  const id = created.json().data.id as string;
  await harness.container.db.query(
    "UPDATE webhook_endpoints SET secret = 'whsec_legacyplaintextsecretvalue0000000' WHERE id = $1",
    [id],
  );
  const sealed = await sealSecrets(harness.container.db, harness.container.keyring, { rotate: false });
  expect(sealed).toBeGreaterThanOrEqual(1);
  const [row] = await harness.container.db.query<{ secret: string }>(
    'SELECT secret FROM webhook_endpoints WHERE id = $1',
    [id],
  );
  expect(row!.secret.startsWith('enc:v1:')).toBe(true);
  expect(harness.container.keyring.decryptText(row!.secret, `webhook_endpoint:${id}`)).toBe(
    'whsec_legacyplaintextsecretvalue0000000',
  );
});
