/**
 * The one catalogue of error codes Kosh returns. Every code has a type and an HTTP status;
 * `src/http/errors.ts` is the only place that turns these into responses, and
 * `docs/errors.md` documents each one (a unit test keeps the two in step).
 */
export const ERROR_CATALOGUE = {
  // 400 — the request itself is wrong
  invalid_json: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request body is not valid JSON.',
  },
  invalid_body: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request body could not be read.',
  },
  missing_field: { status: 400, type: 'invalid_request_error', message: 'A required field is missing.' },
  invalid_field: { status: 400, type: 'invalid_request_error', message: 'A field has an invalid value.' },
  unknown_field: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request contains a field Kosh does not know.',
  },
  server_owned_field: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The request sets a field that only Kosh sets.',
  },
  amount_out_of_range: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The amount is outside the allowed range.',
  },
  currency_not_supported: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The currency is not supported.',
  },
  invalid_url: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The URL is not valid (check its percent-encoding).',
  },
  malformed_request: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The HTTP request could not be read.',
  },
  invalid_cursor: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The pagination cursor is not valid.',
  },
  refund_exceeds_captured: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The refund is more than the payment has left to refund.',
  },
  amount_mismatch: {
    status: 400,
    type: 'invalid_request_error',
    message: "The amount does not equal the order's amount.",
  },
  currency_mismatch: {
    status: 400,
    type: 'invalid_request_error',
    message: "The currency does not equal the order's currency.",
  },
  method_not_enabled: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The payment method is not enabled for this account.',
  },
  invalid_return_url: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The return_url is not allowed.',
  },
  invalid_vpa: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The VPA is not a UPI id of the form name@handle.',
  },
  invalid_webhook_url: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The webhook URL is not allowed.',
  },
  invalid_file: { status: 400, type: 'invalid_request_error', message: 'The uploaded file is not accepted.' },
  invalid_idempotency_key: {
    status: 400,
    type: 'invalid_request_error',
    message: 'The Idempotency-Key header is not valid.',
  },
  // 401, 403
  authentication_required: {
    status: 401,
    type: 'authentication_error',
    message: 'Send HTTP Basic credentials: base64(api_key:secret_key).',
  },
  invalid_credentials: {
    status: 401,
    type: 'authentication_error',
    message: 'The API key or secret key is not valid.',
  },
  partner_key_required: {
    status: 403,
    type: 'permission_error',
    message: 'This endpoint needs a partner key.',
  },
  merchant_key_required: {
    status: 403,
    type: 'permission_error',
    message: 'This endpoint needs a merchant key.',
  },
  cross_site_request: {
    status: 403,
    type: 'permission_error',
    message:
      'A web page of another site sent this request; the API takes requests from servers, not from pages.',
  },
  live_mode_required: {
    status: 403,
    type: 'permission_error',
    message: 'This endpoint needs a live key.',
  },
  account_not_activated: {
    status: 403,
    type: 'permission_error',
    message: 'The account is not activated for live mode.',
  },
  // 404, 405
  route_not_found: { status: 404, type: 'invalid_request_error', message: 'No such endpoint.' },
  resource_not_found: { status: 404, type: 'invalid_request_error', message: 'No such object.' },
  method_not_allowed: {
    status: 405,
    type: 'invalid_request_error',
    message: 'The HTTP method is not allowed on this endpoint.',
  },
  // 408, 409, 413, 415, 422, 431
  request_timeout: {
    status: 408,
    type: 'invalid_request_error',
    message: 'The request was not received in time; send it again.',
  },
  headers_too_large: {
    status: 431,
    type: 'invalid_request_error',
    message: 'The request headers are too large.',
  },
  order_already_paid: { status: 409, type: 'invalid_request_error', message: 'The order is already paid.' },
  checkout_session_closed: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The checkout session is completed or expired; it starts no payment.',
  },
  state_conflict: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The object changed state; fetch it and try again.',
  },
  webhook_endpoint_disabled: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The webhook endpoint is disabled; enable it first.',
  },
  payment_already_completed: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The payment is already completed.',
  },
  connector_account_active: {
    status: 409,
    type: 'invalid_request_error',
    message: 'The merchant already has an active connector account; disable it first.',
  },
  payment_not_captured: {
    status: 409,
    type: 'invalid_request_error',
    message: 'Only a captured payment can be refunded.',
  },
  refund_receipt_in_use: {
    status: 409,
    type: 'invalid_request_error',
    message: 'Another refund already has this receipt.',
  },
  idempotency_key_in_use: {
    status: 409,
    type: 'idempotency_error',
    message: 'A request with this Idempotency-Key is still being processed.',
  },
  idempotency_key_reused: {
    status: 422,
    type: 'idempotency_error',
    message: 'This Idempotency-Key was used with a different request.',
  },
  body_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    message: 'Send application/json or application/x-www-form-urlencoded.',
  },
  // 429
  rate_limit_exceeded: {
    status: 429,
    type: 'rate_limit_error',
    message: 'Too many requests; retry after the time in Retry-After.',
  },
  // 5xx — never echo internal details
  connector_unavailable: {
    status: 503,
    type: 'api_error',
    message: 'No payment connector is configured for live mode.',
  },
  service_unavailable: {
    status: 503,
    type: 'api_error',
    message: 'The service is temporarily unavailable; retry shortly.',
  },
  internal_error: { status: 500, type: 'api_error', message: 'Something went wrong on our side.' },
} as const satisfies Record<string, { status: number; type: ErrorType; message: string }>;

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** A failure Kosh explains to the caller. Anything else that is thrown is an internal error. */
export class KoshError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message?: string, field?: string) {
    super(message ?? ERROR_CATALOGUE[code].message);
    this.name = 'KoshError';
    this.code = code;
    this.field = field;
  }
}

export function notFound(entity: string, id?: string): KoshError {
  return new KoshError('resource_not_found', id ? `No ${entity} with id '${id}'.` : `No such ${entity}.`);
}
