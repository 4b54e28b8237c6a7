import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createContainer } from '../../src/container.js';
import { systemClock } from '../../src/domain/clock.js';
import { createLogger } from '../../src/log.js';
import { EncryptionKeyError } from '../../src/security/key-check.js';
import { keyIdOf } from '../../src/security/keyring.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/**
 * A process whose KOSH_ENCRYPTION_KEY cannot read the secrets in its database refuses to start,
 * rather than report ready and then fail (and write secrets the other processes cannot read).
 */
let harness: Harness;

beforeAll(async () => {
  harness = await createHarness('postgres');
});
afterAll(async () => {
  await harness.close();
});

const silent = () => ({
  db: harness.container.db,
  clock: systemClock,
  log: createLogger('silent'),
  migrate: false,
});

async function checkValue(): Promise<string | undefined> {
  const [row] = await harness.container.db.query<{ value: string }>(
    "SELECT value FROM settings WHERE name = 'encryption_key_check'",
  );
  return row?.value;
}

it('refuses to start with a key that cannot read the stored secrets, naming both keys', async () => {
  const ours = harness.container.keyring.currentKeyId;
  expect((await checkValue())?.startsWith(`enc:v1:${ours}:`)).toBe(true);
  const stranger = randomBytes(32);
  const refused = createContainer(
    { ...harness.container.config, encryptionKey: stranger, previousEncryptionKeys: [] },
    silent(),
  );
  await expect(refused).rejects.toThrow(EncryptionKeyError);
  await expect(refused).rejects.toThrow(
    `KOSH_ENCRYPTION_KEY (key ${keyIdOf(stranger)}) cannot read this database's secrets, which are stored under key ${ours}`,
  );
  // With the database's key among the previous ones (a rotation under way), it starts.
  await createContainer(
    {
      ...harness.container.config,
      encryptionKey: stranger,
      previousEncryptionKeys: [harness.container.config.encryptionKey as Buffer],
    },
    silent(),
  );
  expect((await checkValue())?.startsWith(`enc:v1:${ours}:`)).toBe(true);
});

it('holds a database from before the check to the key its secrets were stored under', async () => {
  const merchant = await harness.merchant('Before the check');
  const endpoint = await harness.request('POST', '/v1/webhooks/', {
    auth: merchant,
    json: { url: 'http://127.0.0.1:9/before' },
  });
  expect(endpoint.statusCode).toBe(200);
  await harness.container.db.query("DELETE FROM settings WHERE name = 'encryption_key_check'");
  const config = harness.container.config;
  await expect(
    createContainer({ ...config, encryptionKey: randomBytes(32), previousEncryptionKeys: [] }, silent()),
  ).rejects.toThrow(`which are stored under key ${harness.container.keyring.currentKeyId}`);
  expect(await checkValue()).toBeUndefined();
  // The key the secrets were stored under starts, and stores the check value under it.
  await createContainer(config, silent());
  expect((await checkValue())?.startsWith(`enc:v1:${harness.container.keyring.currentKeyId}:`)).toBe(true);
});

it('lets a rolling rotation run: a process with the new key for reading only reads what it writes', async () => {
  const config = harness.container.config;
  const oldKey = config.encryptionKey as Buffer;
  const newKey = randomBytes(32);
  // Step 1 on a host: the old key writes, the new one is there for reading; it starts.
  const reading = await createContainer({ ...config, previousEncryptionKeys: [newKey] }, silent());
  // Step 2 on another host: the new key writes.
  const writing = await createContainer(
    { ...config, encryptionKey: newKey, previousEncryptionKeys: [oldKey] },
    silent(),
  );
  const sealed = writing.keyring.encrypt('whsec_rolling', 'webhook_endpoint:we_rolling');
  expect(reading.keyring.decryptText(sealed, 'webhook_endpoint:we_rolling')).toBe('whsec_rolling');
  // A host still on the old key alone could not read it: that is what step 1 is for.
  expect(() => harness.container.keyring.decryptText(sealed, 'webhook_endpoint:we_rolling')).toThrow(
    `key ${keyIdOf(newKey)}, which is not configured`,
  );
});
