import type { Db, Queryable } from '../../db/db.js';
import { type Clock, unixSeconds } from '../../domain/clock.js';
import { KoshError, notFound } from '../../domain/errors.js';
import { type IdGenerator, looksLikeId } from '../../domain/ids.js';
import { MAX_PAGE_SIZE, type Page, type PageQuery, pageRequest, toPage } from '../../domain/pagination.js';
import type { Scope } from '../../domain/scope.js';
import type { KeyRing } from '../../security/keyring.js';
import type { EventsService } from '../events/events.service.js';
import type { AttemptRow, DeliveriesRepo, DeliveryRow } from './deliveries.repo.js';
import { newWebhookSecret } from './signing.js';
import type { Resolver } from './url-safety.js';
import { validateWebhookUrl } from './url-safety.js';
import type { CreateEndpoint, Delivery, Endpoint, UpdateEndpoint } from './webhooks.model.js';
import type { EndpointRow, WebhooksRepo } from './webhooks.repo.js';

/** The associated data of an endpoint's encrypted signing secrets (current and previous). */
export function endpointSecretContext(endpointId: string): string {
  return `webhook_endpoint:${endpointId}`;
}

/** After a rotation, deliveries carry signatures with the old and the new secret for this long. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

export function toEndpoint(row: EndpointRow, secret?: string): Endpoint {
  return {
    id: row.id,
    entity: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason as Endpoint['disabled_reason'],
    mode: row.mode,
    created_at: unixSeconds(row.created_at),
    ...(secret ? { secret } : {}),
    previous_secret_expires_at: row.previous_secret_expires_at
      ? unixSeconds(row.previous_secret_expires_at)
      : null,
  };
}

function seconds(date: Date | null): number | null {
  return date ? unixSeconds(date) : null;
}

export function toDelivery(row: DeliveryRow, attempts: AttemptRow[]): Delivery {
  return {
    id: row.id,
    entity: 'webhook_delivery',
    event_id: row.event_id,
    endpoint_id: row.endpoint_id,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: seconds(row.next_attempt_at),
    last_attempt_at: seconds(row.last_attempt_at),
    created_at: unixSeconds(row.created_at),
    attempts: attempts.map((attempt) => ({
      id: attempt.id,
      attempted_at: unixSeconds(attempt.attempted_at),
      url: attempt.url,
      status_code: attempt.status_code,
      latency_ms: attempt.latency_ms,
      response_body: attempt.response_body,
      error: attempt.error,
      succeeded: attempt.succeeded,
    })),
  };
}

export function createWebhooksService(deps: {
  db: Db;
  repo: WebhooksRepo;
  deliveries: DeliveriesRepo;
  /** Where the fan-out takes the events waiting for it. */
  events: Pick<EventsService, 'takeForFanOut'>;
  ids: IdGenerator;
  clock: Clock;
  resolver: Resolver;
  keyring: KeyRing;
  /** KOSH_ALLOW_LOOPBACK_WEBHOOKS: test-mode URLs may point at this machine. */
  allowLoopback: boolean;
}) {
  const { db, repo, deliveries, events, ids, clock, resolver, keyring, allowLoopback } = deps;
  const policy = (scope: Scope) => ({ mode: scope.mode, allowLoopback });
  /** Signing secrets are stored encrypted, bound to their endpoint. */
  const seal = (endpointId: string, secret: string) =>
    keyring.encrypt(secret, endpointSecretContext(endpointId));

  /** The caller's endpoint or a 404: another account's or mode's endpoint is indistinguishable from none. */
  async function owned(
    scope: Scope,
    id: string,
    handle: Queryable = db,
    forUpdate = false,
  ): Promise<EndpointRow> {
    const row = looksLikeId('whk', id)
      ? await repo.find(handle, scope.accountId, scope.mode, id, forUpdate)
      : undefined;
    if (!row) throw notFound('webhook endpoint', id);
    return row;
  }

  async function resumeCreation(scope: Scope, id: string, secret: string): Promise<EndpointRow> {
    await owned(scope, id);
    const row = await repo.replaceSecret(db, id, seal(id, secret), clock.now());
    if (!row) throw notFound('webhook endpoint', id);
    return row;
  }

  /** A page of the event's deliveries, newest first, each with every attempt. */
  async function deliveriesOf(
    scope: Scope,
    eventId: string,
    query: PageQuery = {},
    handle: Queryable = db,
  ): Promise<Page<Delivery>> {
    const page = pageRequest('msg', query);
    const rows = await deliveries.listForEvent(handle, scope.accountId, scope.mode, eventId, page);
    const attempts = await deliveries.attemptsFor(
      handle,
      scope.accountId,
      scope.mode,
      rows.slice(0, page.limit).map((row) => row.id),
    );
    return toPage(rows, page.limit, (row) =>
      toDelivery(
        row,
        attempts.filter((attempt) => attempt.delivery_id === row.id),
      ),
    );
  }

  /** Two statements for any number of endpoints or events: their deliveries, then all their attempts. */
  async function latestDeliveries(
    scope: Scope,
    by: 'endpoint_id' | 'event_id',
    ids: string[],
    limit: number,
  ): Promise<Map<string, Delivery[]>> {
    const rows = await deliveries.latestFor(db, scope.accountId, scope.mode, by, ids, limit);
    const attempts = await deliveries.attemptsFor(
      db,
      scope.accountId,
      scope.mode,
      rows.map((row) => row.id),
    );
    const found = new Map<string, Delivery[]>();
    for (const row of rows) {
      const delivery = toDelivery(
        row,
        attempts.filter((attempt) => attempt.delivery_id === row.id),
      );
      const key = row[by];
      found.set(key, [...(found.get(key) ?? []), delivery]);
    }
    return found;
  }

  return {
    /**
     * Creates an endpoint; its secret is shown only in this answer. `options.ids` are a keyed
     * request's seeded ids: a retry after a crash finds the endpoint the dead attempt created, and
     * since its secret was never shown, gives it a new one to show.
     */
    async create(
      scope: Scope,
      input: CreateEndpoint,
      options: { ids?: IdGenerator } = {},
    ): Promise<Endpoint> {
      // The URL check resolves the host: outside any transaction, before anything is written.
      const url = await validateWebhookUrl(input.url, policy(scope), resolver);
      const secret = newWebhookSecret();
      const id = (options.ids ?? ids).next('whk');
      const now = clock.now();
      const row =
        (await repo.insert(db, {
          id,
          accountId: scope.accountId,
          mode: scope.mode,
          url,
          description: input.description ?? null,
          enabledEvents: input.enabled_events ?? ['*'],
          secret: seal(id, secret),
          now,
        })) ?? (await resumeCreation(scope, id, secret));
      if (input.enabled === false)
        return toEndpoint(await repo.update(db, row.id, { enabled: false }, clock.now()), secret);
      return toEndpoint(row, secret);
    },

    async get(scope: Scope, id: string): Promise<Endpoint> {
      return toEndpoint(await owned(scope, id));
    },

    async list(scope: Scope, query: PageQuery): Promise<Page<Endpoint>> {
      const page = pageRequest('whk', query);
      const rows = await repo.list(db, scope.accountId, scope.mode, page);
      return toPage(rows, page.limit, (row) => toEndpoint(row));
    },

    async update(scope: Scope, id: string, input: UpdateEndpoint): Promise<Endpoint> {
      await owned(scope, id);
      // The network check runs before the transaction: no DNS lookups while holding row locks.
      const url =
        input.url === undefined ? undefined : await validateWebhookUrl(input.url, policy(scope), resolver);
      return db.transaction(async (tx) => {
        await owned(scope, id, tx, true);
        const row = await repo.update(
          tx,
          id,
          {
            ...(url !== undefined ? { url } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            ...(input.enabled_events !== undefined ? { enabledEvents: input.enabled_events } : {}),
            ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
          },
          clock.now(),
        );
        if (input.enabled === false) await deliveries.failPendingForEndpoint(tx, id, clock.now());
        return toEndpoint(row);
      });
    },

    async remove(scope: Scope, id: string): Promise<{ id: string; deleted: true }> {
      await db.transaction(async (tx) => {
        await owned(scope, id, tx, true);
        await repo.softDelete(tx, id, clock.now());
        await deliveries.failPendingForEndpoint(tx, id, clock.now());
      });
      return { id, deleted: true };
    },

    async rotateSecret(scope: Scope, id: string, on: Db = db): Promise<Endpoint> {
      const secret = newWebhookSecret();
      return on.transaction(async (tx) => {
        await owned(scope, id, tx, true);
        const now = clock.now();
        const row = await repo.rotateSecret(
          tx,
          id,
          seal(id, secret),
          new Date(now.getTime() + ROTATION_OVERLAP_MS),
          now,
        );
        return toEndpoint(row, secret);
      });
    },

    deliveriesOf,

    /** Each endpoint's latest deliveries with their attempts, by endpoint id (the dashboard's webhooks page). */
    latestDeliveriesOfEndpoints(scope: Scope, endpointIds: string[], limit: number) {
      return latestDeliveries(scope, 'endpoint_id', endpointIds, limit);
    },

    /** Each event's latest deliveries with their attempts, by event id (the dashboard's payment page). */
    latestDeliveriesOfEvents(scope: Scope, eventIds: string[], limit: number) {
      return latestDeliveries(scope, 'event_id', eventIds, limit);
    },

    /** Sends the event again to one endpoint or to every enabled endpoint that takes its type. */
    async redeliver(
      scope: Scope,
      event: { id: string; type: string },
      endpointId: string | undefined,
      on: Db = db,
    ): Promise<Page<Delivery>> {
      let endpoints: EndpointRow[];
      if (endpointId !== undefined) {
        const endpoint = await owned(scope, endpointId, on);
        if (!endpoint.enabled) {
          throw new KoshError(
            'webhook_endpoint_disabled',
            `Webhook endpoint '${endpointId}' is disabled; enable it first.`,
            'endpoint_id',
          );
        }
        endpoints = [endpoint];
      } else {
        endpoints = await repo.listMatching(on, scope.accountId, scope.mode, event.type);
      }
      if (endpoints.length > 0) {
        await on.transaction((tx) =>
          deliveries.redeliver(
            tx,
            { id: event.id, accountId: scope.accountId, mode: scope.mode },
            endpoints.map((endpoint) => endpoint.id),
            () => ids.next('msg'),
            clock.now(),
          ),
        );
      }
      // One delivery per endpoint, and an account may have many endpoints: answer one page.
      return deliveriesOf(scope, event.id, { limit: MAX_PAGE_SIZE }, on);
    },

    /** One fan-out batch: new events become deliveries. Safe to run in any number of processes. */
    async fanOut(limit: number): Promise<number> {
      return db.transaction(async (tx) => {
        const eventIds = await events.takeForFanOut(tx, limit);
        if (eventIds.length > 0) await deliveries.fanOut(tx, eventIds, () => ids.next('msg'), clock.now());
        return eventIds.length;
      });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
