import { Type } from 'typebox';

export const Event = Type.Object({
  id: Type.String({ description: '`evt_` and an opaque suffix; also the `webhook-id` of its deliveries' }),
  type: Type.String({
    description: 'payment.pending, payment.captured, payment.failed, order.paid, merchant.*',
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
    type: Type.Optional(Type.String({ maxLength: 60, description: 'Only events of this type' })),
    delivery_success: Type.Optional(
      Type.Boolean({
        description:
          'false: events with a webhook delivery that has not succeeded (pending or failed); true: events all of whose deliveries succeeded.',
      }),
    ),
  },
  { additionalProperties: false },
);
