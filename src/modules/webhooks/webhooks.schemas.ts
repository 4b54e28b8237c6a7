import { type Static, Type } from 'typebox';
import type { Same } from '../../http/schemas.js';
import { EVENT_TYPE_ALTERNATIVES, EVENT_TYPE_LIST } from '../events/events.schemas.js';
import type {
  CreateEndpoint,
  DeliveryAttempt,
  Delivery as DeliveryView,
  Endpoint as EndpointView,
  UpdateEndpoint,
} from './webhooks.model.js';

export const EventTypePattern = `^(\\*|${EVENT_TYPE_ALTERNATIVES})$`;

const EnabledEvents = Type.Array(Type.String({ pattern: EventTypePattern, maxLength: 60 }), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: `Event types sent to this endpoint: ${EVENT_TYPE_LIST}; or ["*"] for every type (the default).`,
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: 'Live mode: a public https URL. Test mode also allows http://localhost and 127.0.0.1.',
});
const Description = Type.String({ maxLength: 500 });

export const CreateEndpointBody = Type.Object(
  {
    url: Url,
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const Endpoint = Type.Object({
  id: Type.String({ description: '`whk_` and an opaque suffix' }),
  entity: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled_events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([
    Type.Literal('disabled_by_user'),
    Type.Literal('gone'),
    Type.Literal('failing'),
    Type.Null(),
  ]),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  secret: Type.Optional(
    Type.String({
      description: 'The whsec_ signing secret; present only in the create and rotate responses.',
    }),
  ),
  previous_secret_expires_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Until when deliveries are also signed with the secret before the last rotation.',
  }),
});
export type Endpoint = Static<typeof Endpoint>;

export const Attempt = Type.Object({
  id: Type.String(),
  attempted_at: Type.Integer({ description: 'Unix time in seconds' }),
  url: Type.String(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  latency_ms: Type.Integer(),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 2 KiB of the answer' }),
  error: Type.Union([Type.String(), Type.Null()]),
  succeeded: Type.Boolean(),
});

export const Delivery = Type.Object({
  id: Type.String({ description: '`msg_` and an opaque suffix' }),
  entity: Type.Literal('webhook_delivery'),
  event_id: Type.String(),
  endpoint_id: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempt_count: Type.Integer(),
  next_attempt_at: Type.Union([Type.Integer(), Type.Null()]),
  last_attempt_at: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Type.Integer(),
  attempts: Type.Array(Attempt),
});
export type Delivery = Static<typeof Delivery>;

export const RedeliverBody = Type.Object(
  {
    endpoint_id: Type.Optional(
      Type.String({
        maxLength: 100,
        description: 'Only this endpoint; otherwise every matching enabled endpoint.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RedeliverBody = Static<typeof RedeliverBody>;

/** Rotation takes no fields; the empty schema makes a sent field a 400 instead of being ignored. */
export const RotateSecretBody = Type.Object({}, { additionalProperties: false });

// The service takes and returns the domain types of webhooks.model.ts; these fail the typecheck
// when a schema here and its domain type part.
const _createEndpoint: Same<CreateEndpointBody, CreateEndpoint> = true;
const _updateEndpoint: Same<UpdateEndpointBody, UpdateEndpoint> = true;
const _endpoint: Same<Endpoint, EndpointView> = true;
const _attempt: Same<Static<typeof Attempt>, DeliveryAttempt> = true;
const _delivery: Same<Delivery, DeliveryView> = true;
