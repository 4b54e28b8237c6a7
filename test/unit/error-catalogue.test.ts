import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.js';

const TYPE_STATUSES: Record<string, number[]> = {
  // 408 and 431 are what the HTTP layer answers before a route: a request not received in time,
  // headers too large (docs/errors.md).
  invalid_request_error: [400, 404, 405, 408, 409, 413, 415, 422, 431],
  authentication_error: [401],
  permission_error: [403],
  // The design's envelope: an idempotency_error is a conflict with an earlier request (409) or a
  // key reused for another request (422); a malformed header is an ordinary invalid request (400).
  idempotency_error: [409, 422],
  rate_limit_error: [429],
  api_error: [500, 503],
};

describe('error catalogue', () => {
  const docs = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

  it.each(Object.entries(ERROR_CATALOGUE))(
    '%s has a type that fits its status and is documented',
    (code, entry) => {
      expect(TYPE_STATUSES[entry.type]).toContain(entry.status);
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(docs).toMatch(
        new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${entry.status}\\s*\\|\\s*${entry.type}\\s*\\|`),
      );
    },
  );

  it('documents no code that does not exist', () => {
    const documented = [...docs.matchAll(/^\|\s*`([a-z_]+)`\s*\|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
  });
});
