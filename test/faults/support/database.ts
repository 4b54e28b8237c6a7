import pg from 'pg';

/** Runs `work` on a connection of its own to the fault run's PostgreSQL, closed after. */
export async function withClient<T>(
  databaseUrl: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The `id` column of a query's rows, on an open client: the checks ask the database for offending ids. */
export async function queryIds(client: pg.Client, sql: string, params: unknown[] = []): Promise<string[]> {
  return (await client.query<{ id: string }>(sql, params)).rows.map((row) => row.id);
}

/** `queryIds` on a connection of its own, for a check that asks one question. */
export function idsOf(databaseUrl: string, sql: string, params: unknown[] = []): Promise<string[]> {
  return withClient(databaseUrl, (client) => queryIds(client, sql, params));
}
