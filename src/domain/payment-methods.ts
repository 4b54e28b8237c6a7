/** The ways a customer pays, as payments, lists, filters and pages name them: declared once. */
export type PaymentMethod = 'netbanking' | 'wallet' | 'upi';
export const PAYMENT_METHODS: readonly PaymentMethod[] = ['netbanking', 'wallet', 'upi'];

/**
 * The UPI flows: `intent` (a upi://pay link a UPI app opens, on a phone), `qr` (the same link as a
 * QR code, on a wide screen) and `collect` (a request sent to the customer's VPA, where enabled).
 */
export type UpiFlow = 'intent' | 'qr' | 'collect';
export const UPI_FLOWS: readonly UpiFlow[] = ['intent', 'qr', 'collect'];
