import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../../db/db.js';
import { type Clock, unixSeconds } from '../../domain/clock.js';
import { KoshError } from '../../domain/errors.js';
import type { IdGenerator } from '../../domain/ids.js';
import type { KeyRing } from '../../security/keyring.js';
import type { ClaimedDelivery, DeliveriesRepo } from './deliveries.repo.js';
import type { Sender, SendResult } from './http-sender.js';
import {
  DISABLE_AFTER_FAILING_MS,
  MAX_ATTEMPTS,
  nextRetryDelayMs,
  parseRetryAfter,
} from './retry-schedule.js';
import { signWebhook } from './signing.js';
import type { WebhooksRepo } from './webhooks.repo.js';
import { endpointSecretContext } from './webhooks.service.js';

export interface DeliveryWorkerDeps {
  db: Db;
  deliveries: DeliveriesRepo;
  endpoints: WebhooksRepo;
  ids: IdGenerator;
  clock: Clock;
  send: Sender;
  log: Logger;
  keyring: KeyRing;
  timeoutMs: number;
  leaseMs: number;
  batchSize: number;
  random?: () => number;
}

/** The body every endpoint receives; documented in docs/webhooks.md. */
export function webhookBody(
  delivery: Pick<ClaimedDelivery, 'event_id' | 'event_type' | 'mode' | 'event_created_at' | 'payload'>,
): string {
  return JSON.stringify({
    id: delivery.event_id,
    type: delivery.event_type,
    mode: delivery.mode,
    created_at: unixSeconds(delivery.event_created_at),
    data: delivery.payload,
  });
}

/** A retry of a failed record starts only if it can end this long before the lease does. */
const RECORD_MARGIN_MS = 1_000;

/**
 * Claim → send → record, each step its own short step: the claim is committed before any network
 * call, the send runs outside every transaction, and the outcome is recorded in one transaction.
 * A worker killed after claiming leaves a lease that runs out, and the delivery is retried.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps) {
  const { db, deliveries, endpoints, ids, clock, log } = deps;

  async function claim(
    limit = deps.batchSize,
    skipAccounts: string[] = [],
  ): Promise<{ token: string; claimed: ClaimedDelivery[]; leaseEnds: number }> {
    const token = randomBytes(12).toString('hex');
    // When the lease ends on this process's monotonic clock: measured before the claim, so never late.
    const leaseEnds = performance.now() + deps.leaseMs;
    const now = clock.now();
    const claimed = await db.transaction((tx) =>
      deliveries.claimDue(tx, limit, token, now, new Date(now.getTime() + deps.leaseMs), skipAccounts),
    );
    return { token, claimed, leaseEnds };
  }

  async function send(delivery: ClaimedDelivery): Promise<SendResult> {
    const now = clock.now();
    const overlap =
      delivery.previous_secret &&
      delivery.previous_secret_expires_at &&
      delivery.previous_secret_expires_at > now;
    const body = webhookBody(delivery);
    const context = endpointSecretContext(delivery.endpoint_id);
    let headers: ReturnType<typeof signWebhook>;
    try {
      headers = signWebhook(delivery.event_id, now, body, {
        current: deps.keyring.reveal(delivery.secret, context),
        previous:
          overlap && delivery.previous_secret
            ? deps.keyring.reveal(delivery.previous_secret, context)
            : undefined,
      });
    } catch (error) {
      // Nothing was sent: an attempt that failed, on the usual schedule (not a lease left to run
      // out, which would try again and again without a trace).
      log.error({ err: error, endpoint_id: delivery.endpoint_id }, 'a webhook could not be signed');
      return {
        statusCode: undefined,
        latencyMs: 0,
        responseBody: undefined,
        retryAfter: undefined,
        error: 'not sent: its signing secret could not be read',
      };
    }
    return deps.send({
      url: delivery.url,
      mode: delivery.mode,
      headers: { ...headers },
      body,
      timeoutMs: deps.timeoutMs,
    });
  }

  async function record(
    delivery: ClaimedDelivery,
    token: string,
    result: SendResult,
    attemptedAt: Date,
  ): Promise<void> {
    const status = result.statusCode;
    const succeeded = status !== undefined && status >= 200 && status < 300;
    const attemptsMade = delivery.attempt_count + 1;
    const now = clock.now();
    const delay =
      succeeded || attemptsMade >= MAX_ATTEMPTS
        ? undefined
        : nextRetryDelayMs(attemptsMade, parseRetryAfter(result.retryAfter, now), deps.random);
    // Locks are taken endpoint first, then delivery, as the endpoints API does when disabling an
    // endpoint; the same order everywhere means the two never deadlock.
    await db.transaction(async (tx) => {
      let disabledFor: string | undefined;
      if (succeeded) {
        await endpoints.markHealthy(tx, delivery.endpoint_id);
      } else {
        const failingSince = await endpoints.markFailing(tx, delivery.endpoint_id, attemptedAt);
        const reason =
          status === 410
            ? 'gone'
            : now.getTime() - failingSince.getTime() >= DISABLE_AFTER_FAILING_MS
              ? 'failing'
              : undefined;
        if (reason && (await endpoints.disable(tx, delivery.endpoint_id, reason, now))) disabledFor = reason;
      }
      await deliveries.insertAttempt(tx, {
        id: ids.next('att'),
        deliveryId: delivery.id,
        attempted_at: attemptedAt,
        url: delivery.url,
        status_code: status ?? null,
        latency_ms: result.latencyMs,
        response_body: result.responseBody ?? null,
        error: result.error ?? (succeeded ? null : `HTTP ${status}`),
        succeeded,
      });
      await deliveries.recordOutcome(tx, delivery.id, token, {
        status: succeeded ? 'succeeded' : delay === undefined ? 'failed' : 'pending',
        nextAttemptAt: delay === undefined ? null : new Date(now.getTime() + delay),
        attemptedAt,
      });
      if (disabledFor) {
        await deliveries.failPendingForEndpoint(tx, delivery.endpoint_id, now);
        log.warn({ endpoint_id: delivery.endpoint_id, reason: disabledFor }, 'webhook endpoint disabled');
      }
    });
  }

  /**
   * Records an attempt that was sent. While the database is unavailable (a restart, a failover) it
   * tries again, for as long as the lease keeps other workers from sending the delivery again: an
   * outcome given up on would leave the lease to run out, the receiver would get the event a second
   * time, and the first attempt would be missing from the attempt log. Past the lease, or when
   * the job stops, it gives up and the lease does its work.
   */
  async function recordWhileLeased(
    delivery: ClaimedDelivery,
    token: string,
    result: SendResult,
    attemptedAt: Date,
    leaseEnds: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
      try {
        return await record(delivery, token, result, attemptedAt);
      } catch (error) {
        const unavailable = error instanceof KoshError && error.code === 'service_unavailable';
        if (!unavailable || signal?.aborted || performance.now() + wait + RECORD_MARGIN_MS > leaseEnds) {
          throw error;
        }
        log.warn(
          { delivery_id: delivery.id, retry_in_ms: wait },
          'recording a webhook attempt failed: the database is unavailable; trying again',
        );
        await sleep(wait, undefined, { signal }).catch(() => {});
      }
    }
  }

  async function deliver(
    delivery: ClaimedDelivery,
    token: string,
    leaseEnds = performance.now() + deps.leaseMs,
    signal?: AbortSignal,
  ): Promise<void> {
    const attemptedAt = clock.now();
    const result = await send(delivery);
    // Ids only: the URL may carry the merchant's own tokens in its query string.
    log.debug(
      {
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        endpoint_id: delivery.endpoint_id,
        attempt: delivery.attempt_count + 1,
        status_code: result.statusCode,
        latency_ms: result.latencyMs,
        error: result.error,
      },
      'webhook attempt',
    );
    await recordWhileLeased(delivery, token, result, attemptedAt, leaseEnds, signal);
  }

  // The job's sender: up to `batchSize` requests in flight, a slot taken again as soon as one ends
  // (one slow receiver never holds back the others), and no account holding more than half of the
  // slots (docs/webhooks.md, "Delivery").
  const inFlight = new Map<string, Promise<void>>();
  const perAccount = new Map<string, number>();
  const accountShare = Math.max(1, Math.ceil(deps.batchSize / 2));

  function start(delivery: ClaimedDelivery, token: string, leaseEnds: number, signal: AbortSignal): void {
    perAccount.set(delivery.account_id, (perAccount.get(delivery.account_id) ?? 0) + 1);
    const running = deliver(delivery, token, leaseEnds, signal)
      .catch((error: unknown) => {
        // The lease is still set: the delivery will be retried after it runs out.
        log.error({ err: error, delivery_id: delivery.id }, 'recording a webhook attempt failed');
      })
      .finally(() => {
        inFlight.delete(delivery.id);
        const left = (perAccount.get(delivery.account_id) ?? 1) - 1;
        if (left > 0) perAccount.set(delivery.account_id, left);
        else perAccount.delete(delivery.account_id);
      });
    inFlight.set(delivery.id, running);
  }

  return {
    claim,
    deliver,
    /**
     * One step of the job: claims due deliveries into the free slots and starts them without waiting
     * for them; with no slot free, waits for one (or for `signal`). Returns how many it started, or 1
     * after waiting for a slot, so that the job comes back at once.
     */
    async pump(signal: AbortSignal): Promise<number> {
      if (signal.aborted) return 0;
      const free = deps.batchSize - inFlight.size;
      if (free <= 0) {
        await Promise.race([...inFlight.values(), aborted(signal)]);
        return 1;
      }
      const full = [...perAccount].filter(([, count]) => count >= accountShare).map(([account]) => account);
      const { token, claimed, leaseEnds } = await claim(free, full);
      const extra: string[] = [];
      for (const delivery of claimed) {
        if (signal.aborted || (perAccount.get(delivery.account_id) ?? 0) >= accountShare)
          extra.push(delivery.id);
        else start(delivery, token, leaseEnds, signal);
      }
      // Claimed past an account's share (or as the job stops): given back untouched, at once.
      if (extra.length > 0) await deliveries.release(db, extra, token);
      return claimed.length - extra.length;
    },
    /** Waits for the requests `pump` started (the job's stop). */
    async drain(): Promise<void> {
      await Promise.allSettled([...inFlight.values()]);
    },
    /** One batch: claim, send them all concurrently, record each. Returns how many were claimed. */
    async runOnce(signal?: AbortSignal): Promise<number> {
      const { token, claimed, leaseEnds } = await claim();
      if (claimed.length === 0) return 0;
      if (signal?.aborted) {
        await deliveries.release(
          db,
          claimed.map((delivery) => delivery.id),
          token,
        );
        return claimed.length;
      }
      const results = await Promise.allSettled(
        claimed.map((delivery) => deliver(delivery, token, leaseEnds, signal)),
      );
      for (const result of results) {
        // The lease is still set: the delivery will be retried after it runs out.
        if (result.status === 'rejected')
          log.error({ err: result.reason }, 'recording a webhook attempt failed');
      }
      return claimed.length;
    },
  };
}

/** One promise per signal, settled when it aborts (not a listener per wait). */
const abortions = new WeakMap<AbortSignal, Promise<void>>();
function aborted(signal: AbortSignal): Promise<void> {
  let promise = abortions.get(signal);
  if (!promise) {
    promise = new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    abortions.set(signal, promise);
  }
  return promise;
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
