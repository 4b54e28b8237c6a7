import { beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/harness.js';

const PASSWORD = 'correct horse battery staple';
const MINUTE = 60_000;

/**
 * The dashboard purge job (src/jobs/jobs.ts): sessions past their idle time or maximum age and
 * failed logins past the throttle window are deleted, a bounded batch at a time; live ones stay.
 */
describeEachDatabase(
  'dashboard purge job',
  (harness) => {
    let email: string;

    beforeAll(async () => {
      const shop = await harness().merchant('Purge Shop');
      email = `owner-${shop.id}@purge.example`;
      await harness().container.services.dashboardUsers.createUser({
        accountId: shop.id,
        email,
        password: PASSWORD,
      });
    });

    const sessionCount = async () => {
      const [row] = await harness().container.db.query<{ n: string }>(
        'SELECT count(*) AS n FROM dashboard_sessions s JOIN dashboard_users u ON u.id = s.user_id WHERE u.email = $1',
        [email],
      );
      return Number(row!.n);
    };
    const failuresOf = async (address: string) => {
      const rows = await harness().container.db.query<{ failed_at: Date }>(
        'SELECT failed_at FROM dashboard_login_failures WHERE address = $1 ORDER BY failed_at',
        [address],
      );
      return rows.map((row) => row.failed_at.getTime());
    };

    it('deletes expired sessions and old login failures in bounded batches, and keeps live ones', async () => {
      const users = harness().container.services.dashboardUsers;
      const clock = harness().clock;
      const address = '198.51.100.77';
      const login = () => users.login({ email, password: PASSWORD, address: '198.51.100.78' });
      const fail = () =>
        users.login({ email, password: 'not the password at all', address }).then(
          () => expect.fail('a wrong password logged in'),
          (error: { code?: string }) => expect(error.code).toBe('invalid_credentials'),
        );

      // t0: a session that is kept busy until it outlives its maximum age (1 hour here), and a failure.
      const old = await login();
      await fail();
      const failedAt = clock.now().getTime();
      clock.advance(20 * MINUTE);
      expect(await users.session(old)).toBeDefined();
      clock.advance(15 * MINUTE); // t35
      const live = await login();
      clock.advance(5 * MINUTE); // t40: a session nobody uses again
      const idle = await login();
      expect(await users.session(old)).toBeDefined();
      clock.advance(15 * MINUTE); // t55
      expect(await users.session(old)).toBeDefined();
      expect(await users.session(live)).toBeDefined();
      clock.advance(15 * MINUTE); // t70: a failure inside the throttle window
      await fail();
      const recentFailureAt = clock.now().getTime();
      clock.advance(5 * MINUTE); // t75: old is 75 minutes old (used 20 ago), idle unused for 35, live for 20

      expect(await sessionCount()).toBe(3);
      expect(await failuresOf(address)).toEqual([failedAt, recentFailureAt]);

      const job = users.purgeJob(1);
      expect(job.name).toBe('dashboard-purge');
      const signal = new AbortController().signal;
      let runs = 0;
      for (let handled = await job.run(signal); handled > 0; handled = await job.run(signal)) {
        expect(handled).toBeLessThanOrEqual(2); // one session and one failure at most per batch
        expect(++runs).toBeLessThan(100);
      }
      expect(runs).toBeGreaterThanOrEqual(2);

      expect(await sessionCount()).toBe(1);
      expect(await failuresOf(address)).toEqual([recentFailureAt]);
      expect(await users.session(live)).toBeDefined();
      expect(await users.session(old)).toBeUndefined();
      expect(await users.session(idle)).toBeUndefined();
    });
  },
  { KOSH_DASHBOARD_MAX_AGE_SECONDS: '3600', KOSH_DASHBOARD_PASSWORD_COST: '14' },
);
