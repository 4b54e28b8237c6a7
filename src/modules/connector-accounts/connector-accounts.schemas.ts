import { type Static, Type } from 'typebox';

export const CreateConnectorAccountBody = Type.Object(
  {
    connector: Type.Unsafe<'cashfree' | 'razorpay'>({
      type: 'string',
      enum: ['cashfree', 'razorpay'],
      description: 'The payment provider: `cashfree` or `razorpay`.',
    }),
    credentials: Type.Unsafe<Record<string, string>>({
      type: 'object',
      maxProperties: 10,
      additionalProperties: { type: 'string', maxLength: 500 },
      description:
        'Cashfree: `{ client_id, client_secret }`. Razorpay: `{ key_id, key_secret, webhook_secret }`. Secrets are stored encrypted and never shown again.',
    }),
  },
  { additionalProperties: false },
);
export type CreateConnectorAccountBody = Static<typeof CreateConnectorAccountBody>;

export const ConnectorAccount = Type.Object({
  id: Type.String({ description: '`ca_` and an opaque suffix' }),
  entity: Type.Literal('connector_account'),
  connector: Type.Union([Type.Literal('cashfree'), Type.Literal('razorpay')]),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  webhook_url: Type.String({ description: "Register this address for webhooks in the provider's dashboard" }),
  credentials: Type.Unsafe<Record<string, string>>({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'The public credential fields as given, and `<secret>_last4` for each secret',
  }),
  created_at: Type.Integer({ description: 'Unix time in seconds' }),
  disabled_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix time in seconds, once disabled',
  }),
});
export type ConnectorAccount = Static<typeof ConnectorAccount>;
