/**
 * Merchant key-value data as a command carries it: a flat object of scalar values (the API's schema
 * bounds the number of keys and their lengths).
 */
export type Metadata = Record<string, string | number | boolean | null>;
