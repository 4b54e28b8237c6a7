/**
 * Whether the request sent the header `name` (lower case) more than once. Node keeps the first
 * `Authorization` of several and joins several `Idempotency-Key`s with ", ", so either would be
 * read as one value the client never sent; the raw list says what arrived.
 */
export function sentMoreThanOnce(rawHeaders: readonly string[], name: string): boolean {
  let seen = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const header = rawHeaders[index]!;
    if (header.length === name.length && header.toLowerCase() === name && ++seen > 1) return true;
  }
  return false;
}
