import { KoshError } from './errors.js';
import { type IdPrefix, looksLikeId } from './ids.js';

export interface PageRequest {
  limit: number;
  /** The id of the last item of the previous page; items older than it come next. */
  cursor: string | undefined;
}

/** What a caller asks of a list: a page size and where the previous page ended. */
export interface PageQuery {
  limit?: number;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

/** A list's time filter (Unix seconds): `from` ≤ created_at < `to`. */
export interface CreatedRange {
  from?: number;
  to?: number;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

export function pageRequest(prefix: IdPrefix, query: PageQuery): PageRequest {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (query.cursor !== undefined && !looksLikeId(prefix, query.cursor)) {
    throw new KoshError(
      'invalid_cursor',
      `cursor must be a next_cursor value returned by this list.`,
      'cursor',
    );
  }
  return { limit: Math.min(Math.max(limit, 1), MAX_PAGE_SIZE), cursor: query.cursor };
}

/** Repositories fetch `limit + 1` rows newest first; the extra row only says whether more exist. */
export function toPage<Row extends { id: string }, T>(
  rows: Row[],
  limit: number,
  map: (row: Row) => T,
): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  return {
    data: pageRows.map(map),
    has_more: hasMore,
    next_cursor: hasMore ? (pageRows[pageRows.length - 1]?.id ?? null) : null,
  };
}

/** A list's `from` / `to` (Unix seconds) as the times they name; `from` ≤ created_at < `to`. */
export function timeRange(query: CreatedRange): { from?: Date; to?: Date } {
  return {
    from: query.from === undefined ? undefined : new Date(query.from * 1000),
    to: query.to === undefined ? undefined : new Date(query.to * 1000),
  };
}
