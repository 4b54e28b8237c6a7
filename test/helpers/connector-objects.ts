import { randomBytes } from 'node:crypto';
import type { ConnectorPayment, ConnectorRefund } from '../../src/connectors/connector.js';

/** A Kosh-shaped id: a prefix and 26 lowercase characters. */
export const koshId = (prefix: string) => `${prefix}_${randomBytes(13).toString('hex')}`;

/** A payment as a connector sees it, for tests that call a connector directly. */
export function connectorPayment(overrides: Partial<ConnectorPayment> = {}): ConnectorPayment {
  const id = overrides.id ?? koshId('pay');
  return {
    id,
    mode: 'live',
    orderId: koshId('order'),
    amount: 5050,
    currency: 'INR',
    method: 'netbanking',
    code: 'HDFC',
    upi: null,
    customer: { name: 'Asha Rao', email: 'asha@example.com', contact: '+919876543210' },
    description: null,
    createdAt: new Date(),
    callbackUrl: `https://kosh.example/v1/payments/${id}/callback/`,
    provider: { reference: null, status: null, data: {}, pendingAt: null },
    ...overrides,
  };
}

/** A refund of `payment` (all of it by default) as a connector sees it. */
export function connectorRefund(
  payment: ConnectorPayment,
  overrides: Partial<ConnectorRefund> = {},
): ConnectorRefund {
  return {
    id: koshId('rfnd'),
    paymentId: payment.id,
    amount: payment.amount,
    currency: payment.currency,
    speed: 'normal',
    metadata: {},
    createdAt: new Date(),
    provider: { reference: null, status: null, data: {} },
    payment,
    ...overrides,
  };
}
