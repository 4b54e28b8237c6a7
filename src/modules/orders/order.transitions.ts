/**
 * The one table of order state changes, beside the orders table it governs: only the orders
 * module writes orders, and every write is a compare-and-set on the row's `from`.
 */
export type OrderStatus = 'created' | 'attempted' | 'paid';
export const ORDER_STATUSES: readonly OrderStatus[] = ['created', 'attempted', 'paid'];

/** Order moves: a payment was started (again), or a payment captured it. `paid` is final. */
export const ORDER_TRANSITIONS: readonly {
  from: OrderStatus;
  on: 'payment_started' | 'paid';
  to: OrderStatus;
}[] = [
  { from: 'created', on: 'payment_started', to: 'attempted' },
  { from: 'attempted', on: 'payment_started', to: 'attempted' },
  { from: 'attempted', on: 'paid', to: 'paid' },
];

export function orderTransition(from: OrderStatus, on: 'payment_started' | 'paid'): OrderStatus | undefined {
  return ORDER_TRANSITIONS.find((transition) => transition.from === from && transition.on === on)?.to;
}

/**
 * Starting a payment, as one compare-and-set: the order states that accept a new payment and the
 * state they all move to (the table has one target for this move; a second would be a design change).
 */
export const ORDER_PAYMENT_STARTED: { from: readonly OrderStatus[]; to: OrderStatus } = (() => {
  const moves = ORDER_TRANSITIONS.filter((transition) => transition.on === 'payment_started');
  const targets = new Set(moves.map((transition) => transition.to));
  const [to] = targets;
  if (targets.size !== 1 || to === undefined)
    throw new Error('payment_started must have exactly one target state');
  return { from: moves.map((transition) => transition.from), to };
})();
