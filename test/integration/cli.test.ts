import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRIGGERS } from '../../src/cli/trigger.js';
import { DashboardClient } from '../helpers/dashboard-client.js';
import { authHeader, koshProcesses, type SandboxCredentials } from '../helpers/kosh-serve.js';
import { freePort, ROOT, runKosh } from '../helpers/process.js';

const { tempDir, serve, running } = koshProcesses();

// Every case has its own data folder or database, so they run at once: the file takes as long as
// its slowest case, not their sum.
describe.concurrent('the kosh command', { timeout: 240_000 }, () => {
  describe('kosh serve on the embedded database', () => {
    const dataDir = tempDir();

    it('creates a sandbox on first start, prints its credentials and keeps orders across a restart', async () => {
      const first = await serve({ KOSH_DATA_DIR: dataDir });
      const credentialsFile = path.join(dataDir, 'sandbox-credentials.json');
      expect(fs.statSync(credentialsFile).mode & 0o777).toBe(0o600);
      const credentials: SandboxCredentials = JSON.parse(fs.readFileSync(credentialsFile, 'utf8'));
      const fields = ['account_id', 'api_key', 'dashboard', 'secret_key'];
      expect(Object.keys(credentials.merchant).sort()).toEqual(fields);
      expect(Object.keys(credentials.partner).sort()).toEqual(fields);
      expect(credentials.merchant.account_id).toMatch(/^mid_/);
      expect(credentials.merchant.api_key).toMatch(/^key_test_/);
      expect(first.process.output()).toContain(credentials.merchant.secret_key);
      expect(first.process.output()).toContain(credentials.partner.secret_key);
      // Dashboard logins for both, printed once with the keys.
      for (const account of [credentials.merchant, credentials.partner]) {
        expect(Object.keys(account.dashboard).sort()).toEqual(['email', 'password']);
        expect(first.process.output()).toContain(account.dashboard.password);
        const login = await DashboardClient.login(first.url, account.dashboard);
        expect(login.status).toBe(303);
        expect(login.setCookie).toMatch(/^kosh_session=.+HttpOnly; SameSite=Strict/);
        expect((await login.client.get('/dashboard/')).body).toContain(account.account_id);
      }
      const wrong = { ...credentials.merchant.dashboard, password: 'wrong password!' };
      expect((await DashboardClient.login(first.url, wrong)).status).toBe(401);

      const created = await fetch(`${first.url}/v1/orders/`, {
        method: 'POST',
        headers: { authorization: authHeader(credentials.merchant), 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 5000, currency: 'INR' }),
      });
      expect(created.status).toBe(200);
      const order = ((await created.json()) as { data: { id: string; amount_pending: number } }).data;
      expect(order.amount_pending).toBe(5000);

      // Admin commands while it serves: the server runs them, sent through its admin channel.
      const viaServer = runKosh(['merchant', 'create', '--name', 'While serving', '--json'], {
        KOSH_DATA_DIR: dataDir,
      });
      expect(await viaServer.exited, viaServer.output()).toBe(0);
      const added = JSON.parse(viaServer.output().trim().split('\n').pop()!);
      expect(added.account_id).toMatch(/^mid_/);
      const addedOrders = await fetch(`${first.url}/v1/orders/`, {
        headers: { authorization: authHeader(added) },
      });
      expect(addedOrders.status).toBe(200);

      // kosh trigger fires real test-mode events; they reach a kosh webhooks listen session.
      const listen = runKosh(['webhooks', 'listen', '--api-url', first.url], {
        KOSH_API_KEY: credentials.merchant.api_key,
        KOSH_SECRET_KEY: credentials.merchant.secret_key,
      });
      running.push(listen);
      await listen.waitFor(/Ready\. Test-mode events/);
      for (const [event, ...options] of [
        ['payment.captured'],
        ['payment.failed'],
        ['payment.pending'],
        ['order.paid'],
        ['refund.processed'],
        // A UPI payment answered in the sandbox UPI app instead of the bank page.
        ['payment.captured', '--method', 'upi'],
      ] as [string, ...string[]][]) {
        // The key is the sandbox merchant's, read from sandbox-credentials.json of the data folder.
        const fired = runKosh(['trigger', event, ...options], {
          KOSH_DATA_DIR: dataDir,
          KOSH_API_URL: first.url,
        });
        expect(await fired.exited, fired.output()).toBe(0);
        const eventId = /event\s+(evt_\w+)/.exec(fired.output())?.[1];
        expect(eventId, fired.output()).toBeDefined();
        await listen.waitFor(new RegExp(`--> ${event.replace('.', '\\.')} \\[${eventId}\\]`), 30_000);
        const paymentId = /payment\s+(pay_\w+)/.exec(fired.output())?.[1];
        const payment = await fetch(`${first.url}/v1/payments/${paymentId}/`, {
          headers: { authorization: authHeader(credentials.merchant) },
        });
        expect(((await payment.json()) as { data: { method: string } }).data.method).toBe(
          options.includes('upi') ? 'upi' : 'netbanking',
        );
      }
      await listen.stop('SIGINT');

      // A second process on the same folder is refused, and the first keeps serving.
      const intruder = runKosh(['serve'], { KOSH_DATA_DIR: dataDir, PORT: String(await freePort()) });
      running.push(intruder);
      expect(await intruder.exited).toBe(1);
      expect(intruder.output()).toMatch(/in use by another Kosh process/);
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

      expect(await first.process.stop('SIGTERM')).toBe(0);

      const second = await serve({ KOSH_DATA_DIR: dataDir });
      expect(second.process.output()).not.toContain('created a sandbox');
      const fetched = await fetch(`${second.url}/v1/orders/${order.id}/`, {
        headers: { authorization: authHeader(credentials.merchant) },
      });
      expect(fetched.status).toBe(200);
      expect(((await fetched.json()) as { data: { id: string } }).data.id).toBe(order.id);
      await second.process.stop();
    });

    it('prints the usage for an unknown or incomplete command, without touching any data folder', async () => {
      const untouched = path.join(tempDir(), 'never-created');
      for (const [args, says] of [
        [['frobnicate'], 'Unknown command: frobnicate'],
        [['keys'], 'keys needs an action: keys create.'],
        [['merchant'], 'merchant needs an action: merchant create, merchant activate'],
        [['merchant', 'create'], '--name'],
        [
          ['merchant', 'suspend', 'mid_1', 'mid_2'],
          "Unexpected argument 'mid_2' after 'kosh merchant suspend mid_1'.",
        ],
        [['migrate', 'now'], "Unexpected argument 'now' after 'kosh migrate'."],
        [['serve', '3000'], "Unexpected argument '3000' after 'kosh serve'."],
      ] as const) {
        const process = runKosh([...args], { KOSH_DATA_DIR: untouched });
        expect(await process.exited, args.join(' ')).toBe(64);
        expect(process.output()).toContain('Usage: kosh <command>');
        expect(process.output()).toContain(says);
      }
      expect(fs.existsSync(untouched)).toBe(false);
      // npx kosh, as the docs write it: the package's own bin in a clone.
      const help = spawnSync('npx', ['--no-install', 'kosh', '--help'], { cwd: ROOT, encoding: 'utf8' });
      expect(help.status, help.stderr).toBe(0);
      expect(help.stdout).toContain('trigger EVENT');
      // Every event `trigger` takes, and every option of `webhooks listen`, is in the usage.
      for (const word of [...Object.keys(TRIGGERS), '--listen-port', '--api-key', '--secret-key']) {
        expect(help.stdout).toContain(word);
      }
    });

    it('refuses to start on a bad setting and names it', async () => {
      const process = runKosh(['serve'], { KOSH_DATA_DIR: tempDir(), PORT: 'eighty' });
      expect(await process.exited).toBe(1);
      expect(process.output()).toMatch(/Invalid setting PORT/);
    });

    it('says in one sentence what is wrong with a host, a database or an option, never a stack trace', async () => {
      const server = new URL(
        process.env.KOSH_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
      );
      const missing = new URL(server);
      missing.password = 'not-printed';
      missing.pathname = `/kosh_missing_${randomBytes(4).toString('hex')}`;
      const postgres = (url: string) => ({
        DATABASE_URL: url,
        KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      });
      const aFile = path.join(tempDir(), 'not-a-folder');
      fs.writeFileSync(aFile, '');
      const cases: [string, string[], Record<string, string>, number, string][] = [
        [
          'a host name',
          ['serve'],
          { KOSH_DATA_DIR: tempDir(), HOST: 'not_a_host', PORT: '0' },
          1,
          'kosh: not_a_host is not a name this machine can resolve to an address to listen on (HOST, or --host).',
        ],
        [
          'a database that does not exist',
          ['serve'],
          { PORT: '0', ...postgres(missing.href) },
          1,
          `kosh: cannot use the PostgreSQL database of DATABASE_URL (${server.hostname}:${server.port || '5432'}${missing.pathname}): database "${missing.pathname.slice(1)}" does not exist.`,
        ],
        [
          'no server at the address',
          ['migrate'],
          postgres('postgres://postgres@127.0.0.1:1/kosh'),
          1,
          'kosh: cannot use the PostgreSQL database of DATABASE_URL (127.0.0.1:1/kosh): connect ECONNREFUSED 127.0.0.1:1.',
        ],
        [
          'a data folder that is a file',
          ['serve'],
          { KOSH_DATA_DIR: aFile, PORT: '0' },
          1,
          `kosh: cannot use the data folder ${aFile} (KOSH_DATA_DIR, or --data-dir): it is a file, not a folder.`,
        ],
        [
          'a data folder inside a file',
          ['merchant', 'create', '--name', 'Nowhere'],
          { KOSH_DATA_DIR: path.join(aFile, 'kosh') },
          1,
          `kosh: cannot use the data folder ${path.join(aFile, 'kosh')} (KOSH_DATA_DIR, or --data-dir): a part of its path is a file, not a folder.`,
        ],
        [
          'an option without its value',
          ['serve', '--data-dir'],
          {},
          64,
          "kosh: Option '--data-dir <value>' argument missing",
        ],
      ];
      await Promise.all(
        cases.map(async ([name, args, env, code, sentence]) => {
          const started = runKosh(args, env);
          expect(await started.exited, name).toBe(code);
          expect(started.output(), name).toContain(sentence);
          expect(started.output(), name).not.toMatch(/\n\s+at |not-printed/);
        }),
      );
    });

    it('refuses to serve with an encryption key that cannot read the stored secrets, in one sentence', async () => {
      const dir = tempDir();
      const created = runKosh(['merchant', 'create', '--name', 'Keyed', '--json'], { KOSH_DATA_DIR: dir });
      expect(await created.exited).toBe(0);
      const stranger = randomBytes(32);
      const started = runKosh(['serve'], {
        KOSH_DATA_DIR: dir,
        PORT: '0',
        KOSH_ENCRYPTION_KEY: stranger.toString('base64'),
      });
      expect(await started.exited).toBe(1);
      expect(started.output()).toMatch(
        /^kosh: KOSH_ENCRYPTION_KEY \(key [0-9a-f]{8}\) cannot read this database's secrets, which are stored under key [0-9a-f]{8}: start with the key the other processes use/m,
      );
      expect(started.output()).not.toMatch(/\n\s+at |Kosh is serving/);
    });

    it('refuses a port another process holds in one sentence, before creating a sandbox', async () => {
      const holder = net.createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      const port = (holder.address() as net.AddressInfo).port;
      try {
        const dataDir = tempDir();
        const single = runKosh(['serve'], { KOSH_DATA_DIR: dataDir, PORT: String(port), KOSH_PORT: '3999' });
        // A cluster's primary checks before it opens the database (none listens at this address).
        const clustered = runKosh(['serve', '--workers', '2'], {
          KOSH_DATA_DIR: tempDir(),
          PORT: String(port),
          DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing',
          KOSH_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        });
        for (const process of [single, clustered]) {
          expect(await process.exited).toBe(1);
          expect(process.output()).toContain(`kosh: 127.0.0.1:${port} is already in use by another process`);
          expect(process.output()).not.toMatch(/\n\s+at |secret_key|Try it/);
        }
        expect(fs.existsSync(path.join(dataDir, 'sandbox-credentials.json'))).toBe(false);
        // A newcomer's natural guess for the port's setting is named, not silently ignored.
        expect(single.output()).toContain(
          'KOSH_PORT is not a setting and is ignored: the listening address is PORT',
        );
      } finally {
        holder.close();
      }
    });

    it('prints credentials as JSON from the admin commands', async () => {
      const dir = tempDir();
      const merchant = runKosh(['merchant', 'create', '--name', 'Acme Books', '--json'], {
        KOSH_DATA_DIR: dir,
      });
      expect(await merchant.exited).toBe(0);
      const created = JSON.parse(merchant.output().trim().split('\n').pop()!);
      expect(created).toMatchObject({
        account_id: expect.stringMatching(/^mid_/),
        api_key: expect.stringMatching(/^key_test_/),
        mode: 'test',
      });
      expect(created.secret_key).toMatch(/^sk_test_/);

      const partner = runKosh(['partner', 'create', '--name', 'Platform', '--json'], { KOSH_DATA_DIR: dir });
      expect(await partner.exited).toBe(0);
      expect(JSON.parse(partner.output().trim().split('\n').pop()!).account_id).toMatch(/^ptr_/);

      const testKey = runKosh(
        ['keys', 'create', '--account', created.account_id, '--mode', 'test', '--json'],
        {
          KOSH_DATA_DIR: dir,
        },
      );
      expect(await testKey.exited).toBe(0);
      expect(JSON.parse(testKey.output().trim().split('\n').pop()!).api_key).toMatch(/^key_test_/);

      const liveKey = runKosh(
        ['keys', 'create', '--account', created.account_id, '--mode', 'live', '--json'],
        {
          KOSH_DATA_DIR: dir,
        },
      );
      expect(await liveKey.exited).toBe(1);
      expect(liveKey.output()).toMatch(/activated/);

      // A dashboard user: the password from the flag, or piped in (a terminal would be asked).
      const user = runKosh(
        [
          'users',
          'create',
          '--account',
          created.account_id,
          '--email',
          'Owner@Acme.example',
          '--password',
          'a long passphrase',
          '--json',
        ],
        { KOSH_DATA_DIR: dir },
      );
      expect(await user.exited).toBe(0);
      expect(JSON.parse(user.output().trim().split('\n').pop()!)).toMatchObject({
        user_id: expect.stringMatching(/^usr_/),
        account_id: created.account_id,
        email: 'owner@acme.example',
      });
      const piped = runKosh(
        ['users', 'create', '--account', created.account_id, '--email', 'clerk@acme.example', '--json'],
        {
          KOSH_DATA_DIR: dir,
        },
        'another long passphrase\n',
      );
      expect(await piped.exited).toBe(0);
      const short = runKosh(
        [
          'users',
          'create',
          '--account',
          created.account_id,
          '--email',
          'x@acme.example',
          '--password',
          'short',
        ],
        {
          KOSH_DATA_DIR: dir,
        },
      );
      expect(await short.exited).toBe(1);
      expect(short.output()).toMatch(/password must be 12 to 256 characters/);
      const taken = runKosh(
        [
          'users',
          'create',
          '--account',
          created.account_id,
          '--email',
          'owner@acme.example',
          '--password',
          'a long passphrase',
        ],
        {
          KOSH_DATA_DIR: dir,
        },
      );
      expect(await taken.exited).toBe(1);
      expect(taken.output()).toMatch(/already exists/);
    });
  });
});
