import type { Mode } from '../../domain/scope.js';
import type { DeliveryStatus } from './deliveries.repo.js';

/** What creating a webhook endpoint takes (the API's body; its schema checks the event types). */
export interface CreateEndpoint {
  url: string;
  /** Event types sent to the endpoint, or `["*"]` for every type (the default). */
  enabled_events?: string[];
  description?: string;
  /** true by default. */
  enabled?: boolean;
}

/** What changing an endpoint takes: only the fields given change; a null description clears it. */
export interface UpdateEndpoint {
  url?: string;
  enabled_events?: string[];
  description?: string | null;
  enabled?: boolean;
}

/** Why an endpoint is disabled: by its owner, answered 410 Gone, or failing for too long. */
export type EndpointDisabledReason = 'disabled_by_user' | 'gone' | 'failing';

/** The webhook endpoint as the API and the dashboard show it. */
export interface Endpoint {
  id: string;
  entity: 'webhook_endpoint';
  url: string;
  description: string | null;
  enabled_events: string[];
  enabled: boolean;
  disabled_reason: EndpointDisabledReason | null;
  mode: Mode;
  /** Unix seconds. */
  created_at: number;
  /** The whsec_ signing secret; present only in the create and rotate answers. */
  secret?: string;
  /** Unix seconds: until when deliveries are also signed with the secret before the last rotation. */
  previous_secret_expires_at: number | null;
}

/** One try at delivering an event to an endpoint. */
export interface DeliveryAttempt {
  id: string;
  /** Unix seconds. */
  attempted_at: number;
  url: string;
  status_code: number | null;
  latency_ms: number;
  /** The first 2 KiB of the answer. */
  response_body: string | null;
  error: string | null;
  succeeded: boolean;
}

/** An event's delivery to one endpoint, with every attempt. */
export interface Delivery {
  id: string;
  entity: 'webhook_delivery';
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  /** Unix seconds, as the times below. */
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  created_at: number;
  attempts: DeliveryAttempt[];
}
