import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import qs from 'qs';
import { expect } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.js';
import type { Harness, TestAccount } from '../helpers/harness.js';
import { HOSTILE_STRINGS } from './hostile-inputs.js';

/**
 * Property-based fuzzing of one route: every generated request must get a non-5xx answer, every
 * error must be the documented envelope with a catalogued code, and a rejected request must
 * leave the caller's data exactly as it was. A new endpoint is one `fuzzRoute(...)` call.
 */

export interface EncodedBody {
  contentType?: string;
  payload: string;
}

/** How many requests per route; CI needs at least 1,000. */
export const FUZZ_RUNS = Number(process.env.KOSH_FUZZ_RUNS ?? 1_000);

/** Characters that break naive handling: NUL, halves of surrogate pairs, quotes, markup, line breaks. */
const hostileUnit = fc.constantFrom(
  '\u0000',
  '\ud800',
  '\udc00',
  "'",
  '"',
  '<',
  '>',
  '\\',
  '%',
  '\r',
  '\n',
  '\u202e',
  '🙂',
  'é',
  'a',
  ' ',
);

/** Short strings (fit a 40-character field) that are usually harmless and sometimes hostile. */
export function shortText(maxLength = 40): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: hostileUnit, minLength: 1, maxLength }) },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((text) => text.length <= maxLength)) },
  );
}

/** Strings a merchant might send, near the limits, and hostile ones. */
export const anyText = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.string({ unit: hostileUnit, maxLength: 50 }),
  fc.constantFrom(...HOSTILE_STRINGS, '', ' ', '\u0000', 'a\ud800', '\udfff', '0', '-1', 'null', 'true'),
  fc.string({ minLength: 35, maxLength: 45 }),
  fc.string({ minLength: 490, maxLength: 510 }),
);

/** Numbers around every boundary an amount or a limit has. */
export const anyNumber = fc.oneof(
  fc.integer(),
  fc.integer({ min: -2, max: 200 }),
  fc.constantFrom(99, 100, 101, 10_000_000_000, 10_000_001_000, 2 ** 53, -(2 ** 53), 1e308, -0, 0.5),
  fc.double(),
);

/** A value of any JSON type (and some that JSON cannot hold, which serialise to null). */
export const anyValue = fc.oneof(
  { weight: 3, arbitrary: anyText },
  { weight: 3, arbitrary: anyNumber },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 3, withObjectString: true, withNullPrototype: true }) },
);

/** Encodes a body object as JSON, as a form, or sends garbage under either content type. */
export function encodings<T>(value: fc.Arbitrary<T>): fc.Arbitrary<EncodedBody> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: value.map((body) => ({
        contentType: 'application/json',
        payload: JSON.stringify(body) ?? 'null',
      })),
    },
    {
      weight: 3,
      arbitrary: value
        .filter((body) => body !== null && typeof body === 'object')
        .map((body) => ({ contentType: 'application/x-www-form-urlencoded', payload: qs.stringify(body) })),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        contentType: fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'text/plain',
          'application/xml',
          'multipart/form-data; boundary=x',
          'application/json; charset=utf-16',
        ),
        payload: fc.oneof(fc.string({ maxLength: 200 }), fc.json({ maxDepth: 4 })),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ payload: '' }) },
  );
}

const digestQueries = new WeakMap<Harness, Promise<{ name: string; text: string }>>();
let digestStatements = 0;

/**
 * Installs, once per database, a count of committed row writes per account: a trigger on every
 * table with an `account_id` column (so tables added later are covered) and on `accounts` (a
 * merchant row counts for itself and for its partner) adds one per inserted, updated or deleted
 * row to `fuzz_changes`. A write that is rolled back rolls its count back too. The idempotency
 * table is left out: a keyed request that is refused releases its claim (an insert, then a delete)
 * by design; it is digested by row count and newest row version instead.
 */
async function installChangeCounter(harness: Harness): Promise<{ name: string; text: string }> {
  const { db } = harness.container;
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'account_id'
        AND table_name NOT IN ('idempotency_keys', 'fuzz_changes') ORDER BY table_name`,
  );
  await db.query('CREATE TABLE IF NOT EXISTS fuzz_changes (account_id text PRIMARY KEY, n bigint NOT NULL)');
  await db.query(`CREATE OR REPLACE FUNCTION fuzz_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      rows jsonb[] := '{}';
      r jsonb;
      owners text[] := '{}';
    BEGIN
      IF TG_OP <> 'DELETE' THEN rows := rows || to_jsonb(NEW); END IF;
      IF TG_OP <> 'INSERT' THEN rows := rows || to_jsonb(OLD); END IF;
      FOREACH r IN ARRAY rows LOOP
        IF TG_TABLE_NAME = 'accounts' THEN
          owners := owners || ARRAY[r->>'id', r->>'partner_id'];
        ELSE
          owners := owners || (r->>'account_id');
        END IF;
      END LOOP;
      INSERT INTO fuzz_changes (account_id, n)
        SELECT DISTINCT owner, 1 FROM unnest(owners) AS owner WHERE owner IS NOT NULL
        ON CONFLICT (account_id) DO UPDATE SET n = fuzz_changes.n + 1;
      RETURN NULL;
    END $$`);
  for (const table of ['accounts', ...tables.map((row) => row.table_name)]) {
    await db.query(`DROP TRIGGER IF EXISTS fuzz_count_change ON "${table}"`);
    await db.query(
      `CREATE TRIGGER fuzz_count_change AFTER INSERT OR UPDATE OR DELETE ON "${table}"
         FOR EACH ROW EXECUTE FUNCTION fuzz_count_change()`,
    );
  }
  // Prepared: planned once per connection, as it runs after every fuzzed request that wrote.
  return {
    name: `tenant_digest_${++digestStatements}`,
    text: `SELECT (SELECT coalesce(sum(n), 0) FROM fuzz_changes
                    WHERE account_id = $1 OR account_id IN (SELECT id FROM accounts WHERE partner_id = $1))
                  || ':' || count(*) || ':' || coalesce(max(x.xmin::text::bigint), 0) AS d
             FROM idempotency_keys x
            WHERE account_id = $1 OR account_id IN (SELECT id FROM accounts WHERE partner_id = $1)`,
  };
}

/**
 * A digest of everything the account owns, and for a partner its merchants too: the number of
 * committed row writes to their rows in every table with an `account_id` column and to their
 * account rows (see installChangeCounter), and their idempotency keys' row count and newest row
 * version. Any committed insert, update or delete of their data changes it; reading it costs the
 * same however much data the account has.
 */
export async function tenantDigest(harness: Harness, accountId: string): Promise<string> {
  let statement = digestQueries.get(harness);
  if (!statement) {
    statement = installChangeCounter(harness);
    digestQueries.set(harness, statement);
  }
  const [row] = await harness.container.db.query<{ d: string }>(await statement, [accountId]);
  return row?.d ?? '';
}

/**
 * Statements that may change data. Deliberately broad (a `SELECT … FOR UPDATE` matches too): a
 * request whose statements all miss it cannot have changed anything, so its digest is not asked
 * again; any other request is digested and compared. Every statement the service sends passes
 * through the harness's counting port (`harness.queries`), and no background job runs meanwhile.
 */
const WRITES = /\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|ALTER|DROP|CREATE)\b/i;

/** How the schema validator words a violation; a caller only ever sees Kosh's own words. */
export const RAW_VALIDATOR_WORDING =
  /must NOT|must match|must have required|must be equal|must be (string|integer|number|boolean|object|array|null)\b|must be [<>]=?|must pass|must match format/;

/** The documented error envelope, with a catalogued code whose status and type match the reply. */
export function expectErrorEnvelope(reply: LightMyRequestResponse): void {
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  const body = reply.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual([
    'code',
    'doc_url',
    'field',
    'message',
    'request_id',
    'type',
  ]);
  expect(body.error.doc_url).toMatch(new RegExp(`/docs/errors#${body.error.code}$`));
  expect(body.error.message).not.toMatch(RAW_VALIDATOR_WORDING);
  const entry = ERROR_CATALOGUE[body.error.code as keyof typeof ERROR_CATALOGUE];
  expect(entry, `code ${body.error.code}`).toBeDefined();
  expect(entry.status).toBe(reply.statusCode);
  expect(entry.type).toBe(body.error.type);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.field === null || typeof body.error.field === 'string').toBe(true);
  expect(body.error.request_id).toBe(reply.headers['x-request-id']);
}

/**
 * A refusal on a customer's browser page: an HTML page (never JSON, never a stack trace) with the
 * headers every page carries, that says in Kosh's words what went wrong.
 */
export function expectErrorPage(reply: LightMyRequestResponse): void {
  expect(reply.statusCode).toBeGreaterThanOrEqual(400);
  expect(reply.headers['content-type']).toMatch(/^text\/html/);
  expect(reply.headers['cache-control']).toBe('no-store');
  expect(String(reply.headers['content-security-policy'])).toMatch(/^default-src 'none'; /);
  const main = /<main>([\s\S]*)<\/main>/.exec(reply.body)?.[1] ?? '';
  expect(main, reply.body.slice(0, 300)).toMatch(/<h1>[^<]+<\/h1>/);
  expect(main).not.toMatch(RAW_VALIDATOR_WORDING);
  expect(main).not.toMatch(/\bat \S+ \(|\.(ts|js):\d+/);
}

export interface FuzzRouteOptions {
  method: InjectOptions['method'];
  /** The URL, or an arbitrary of URLs (query strings, path ids). */
  url: string | fc.Arbitrary<string>;
  account: TestAccount;
  body?: fc.Arbitrary<EncodedBody>;
  /** Extra headers, such as Idempotency-Key. */
  headers?: fc.Arbitrary<Record<string, string>>;
  numRuns?: number;
  /** Check that a rejected request changed nothing (default: for every method but GET and HEAD). */
  checkUnchanged?: boolean;
  /** Checks a 2xx reply further (its shape). */
  onSuccess?(reply: LightMyRequestResponse): void;
  /** Checks a refusal (default: the JSON error envelope; a browser page's route passes expectErrorPage). */
  expectError?(reply: LightMyRequestResponse): void;
}

/** Runs the property and returns how many replies each status got (to check the mix is useful). */
export async function fuzzRoute(harness: Harness, options: FuzzRouteOptions): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  const request = fc.record({
    url: typeof options.url === 'string' ? fc.constant(options.url) : options.url,
    body: options.body ?? fc.constant(undefined),
    headers: options.headers ?? fc.constant({}),
  });
  const checkUnchanged = options.checkUnchanged ?? !['GET', 'HEAD'].includes(String(options.method));
  // The state after one request is the state before the next: one digest per request that sent a
  // statement able to change data (see WRITES); a request that sent none left the digest as it was.
  let before = checkUnchanged ? await tenantDigest(harness, options.account.id) : '';
  let seen = harness.queries.trips.length;
  await fc.assert(
    fc.asyncProperty(request, async ({ url, body, headers }) => {
      const reply = await harness.app.inject({
        method: options.method,
        url,
        headers: {
          authorization: options.account.auth,
          ...(body?.contentType ? { 'content-type': body.contentType } : {}),
          ...headers,
        },
        payload: body?.payload,
      });
      statuses.set(reply.statusCode, (statuses.get(reply.statusCode) ?? 0) + 1);
      expect(reply.statusCode, reply.body.slice(0, 500)).toBeLessThan(500);
      const wrote = harness.queries.trips.slice(seen).some((trip) => WRITES.test(trip.text));
      const after = checkUnchanged ? (wrote ? await tenantDigest(harness, options.account.id) : before) : '';
      seen = harness.queries.trips.length;
      const previous = before;
      before = after;
      if (reply.statusCode >= 400) {
        (options.expectError ?? expectErrorEnvelope)(reply);
        expect(after, 'a rejected request changed data').toBe(previous);
      } else {
        options.onSuccess?.(reply);
      }
    }),
    { numRuns: options.numRuns ?? FUZZ_RUNS },
  );
  return statuses;
}

/** Server-owned and misspelt names every write route must refuse. */
const INTRUDERS = ['id', 'status', 'created_at', 'account_id', 'mode', 'kosh_typo', '__proto__', ''];

function setPath(target: Record<string, unknown>, path: string, value: unknown, drop: boolean): void {
  const [head, ...rest] = path.split('.');
  if (rest.length === 0 || typeof target[head as string] !== 'object' || target[head as string] === null) {
    if (drop) delete target[head as string];
    else target[head as string] = value;
    return;
  }
  const child = { ...(target[head as string] as Record<string, unknown>) };
  target[head as string] = child;
  setPath(child, rest.join('.'), value, drop);
}

/**
 * Bodies for a write route, mostly near-valid so that they pass the schema and reach the deeper
 * rules: valid ones, valid ones with one field (dotted paths reach nested objects) replaced by any
 * value or dropped or an intruder field added, and some arbitrary values. `fields` are the route's
 * own field paths.
 */
export function bodiesFrom(
  valid: fc.Arbitrary<Record<string, unknown>>,
  fields: string[],
  /** Values just past a field's rules (a wrong case, an unknown code), tried often for that field. */
  near: Record<string, unknown[]> = {},
): fc.Arbitrary<unknown> {
  const replacement = (field: string) =>
    near[field]?.length
      ? fc.oneof(
          { weight: 2, arbitrary: fc.constantFrom(...(near[field] as unknown[])) },
          { weight: 1, arbitrary: fc.oneof(anyValue, anyText, anyNumber) },
        )
      : fc.oneof(anyValue, anyText, anyNumber, fc.dictionary(anyText, anyValue, { maxKeys: 5 }));
  const change = fc
    .constantFrom(...fields, ...INTRUDERS)
    .chain((field) => fc.tuple(fc.constant(field), replacement(field), fc.boolean()));
  const mutated = fc.tuple(valid, change).map(([body, [field, value, drop]]) => {
    const copy = { ...body };
    setPath(copy, field, value, drop && fields.includes(field));
    return copy;
  });
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: anyValue },
    { weight: 1, arbitrary: fc.dictionary(anyText, anyValue, { maxKeys: 6 }) },
  );
}

/** Percent-encodes; a lone surrogate (not encodable) becomes invalid UTF-8 bytes, another hostile input. */
export function percentEncode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}%ED%A0%80`;
  }
}

/** Query strings for a list route: its own parameters with near and hostile values, and strangers. */
export function listQueries(params: string[], values: string[] = []): fc.Arbitrary<string> {
  const param = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('limit', 'cursor', ...params) },
    { weight: 1, arbitrary: fc.constantFrom('colour', 'limit[]', 'cursor[a]', '__proto__', 'limit.x') },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  );
  const value = fc.oneof(
    anyNumber.map(String),
    anyText,
    fc.constantFrom('1', '10', '100', '101', '0', 'true', 'false', ...values),
  );
  return fc
    .array(fc.tuple(param, value), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&'));
}

/** Checks a list reply's shape. */
export function expectListShape(reply: LightMyRequestResponse): void {
  const body = reply.json();
  expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'next_cursor']);
  expect(Array.isArray(body.data)).toBe(true);
  expect(body.data.length).toBeLessThanOrEqual(100);
}

/**
 * Fuzzes the query strings of list endpoints as `account`: each URL generator runs FUZZ_RUNS times,
 * every 200 is a well-formed list, and both pages and refusals (400 or 404) are seen. Returns the
 * status counts per URL generator for callers that check more.
 */
export async function fuzzLists(
  harness: Harness,
  account: TestAccount,
  urls: fc.Arbitrary<string>[],
): Promise<Map<number, number>[]> {
  const all: Map<number, number>[] = [];
  for (const url of urls) {
    const statuses = await fuzzRoute(harness, { method: 'GET', url, account, onSuccess: expectListShape });
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect((statuses.get(400) ?? 0) + (statuses.get(404) ?? 0)).toBeGreaterThan(0);
    all.push(statuses);
  }
  return all;
}

/** Idempotency-Key headers now and then (only printable values a client could send). */
export const idempotencyHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.constantFrom('k-1', 'k-2'), fc.string({ minLength: 1, maxLength: 20 }))
      .filter((key) => /^[\x20-\x7e]*$/.test(key))
      .map((key) => ({ 'idempotency-key': key })),
  },
);

/** Every secret a successful reply revealed (API secret keys, whsec_ secrets), for a SecretLedger. */
export function secretsIn(body: string): string[] {
  return [...body.matchAll(/"(?:secret_key|secret)":"([^"]+)"/g)].map((match) => match[1] as string);
}
