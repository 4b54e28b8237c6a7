/** The ways a customer pays, as payments, lists, filters and pages name them: declared once. */
export type PaymentMethod = 'netbanking' | 'wallet';
export const PAYMENT_METHODS: readonly PaymentMethod[] = ['netbanking', 'wallet'];
