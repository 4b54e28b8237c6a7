import { Type } from 'typebox';

/** Every event type Kosh sends, as alternatives of a regular expression (`merchant.<status>` for onboarding). */
export const EVENT_TYPE_ALTERNATIVES =
  'payment\\.(pending|captured|failed|late_authorisation)|order\\.paid|refund\\.(created|processed|failed)|checkout_session\\.(completed|expired)|merchant\\.[a-z_]{1,40}';
/** One event type Kosh sends (not `*`). */
export const EVENT_TYPE = new RegExp(`^(${EVENT_TYPE_ALTERNATIVES})$`);
export const EVENT_TYPE_LIST =
  'payment.pending, payment.captured, payment.failed, payment.late_authorisation, order.paid, refund.created, refund.processed, refund.failed, checkout_session.completed, checkout_session.expired, merchant.<status>';

export const Event = Type.Object({
  id: Type.String({ description: '`evt_` and an opaque suffix; also the `webhook-id` of its deliveries' }),
  type: Type.String({
    description: EVENT_TYPE_LIST,
  }),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  data: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The objects the event is about, as they were when it happened: `payment` and `order`.',
  }),
});

export const EventListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    cursor: Type.Optional(Type.String({ maxLength: 100, description: 'next_cursor of the previous page' })),
    type: Type.Optional(
      Type.String({
        maxLength: 60,
        description: `Only events of this type: ${EVENT_TYPE_LIST}`,
      }),
    ),
    delivery_success: Type.Optional(
      Type.Boolean({
        description:
          'false: events with a webhook delivery that has not succeeded (pending or failed); true: events all of whose deliveries succeeded.',
      }),
    ),
  },
  { additionalProperties: false },
);
