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

/** The `id` column of a query's rows: the checks ask the database for offending ids. */
export function idsOf(databaseUrl: string, sql: string, params: unknown[] = []): Promise<string[]> {
  return withClient(databaseUrl, async (client) =>
    (await client.query<{ id: string }>(sql, params)).rows.map((row) => row.id),
  );
}
