/**
 * Named points where the fault suite kills the process on purpose, to prove that a crash at the
 * worst moment loses nothing (docs/testing.md). `KOSH_FAILPOINTS=name[,name…]` arms them; unset,
 * as in every real deployment, `failpoint` does nothing.
 */
export type FailpointName =
  /** A keyed request's work is done (its outside calls made), its answer not yet stored. */
  | 'idempotency-before-store'
  /** A refund is recorded and committed, its provider not yet asked to make it. */
  | 'refund-before-submit';

export function createFailpoints(armed: readonly string[]) {
  const names = new Set(armed);
  return {
    failpoint(name: FailpointName): void {
      if (names.has(name)) process.kill(process.pid, 'SIGKILL');
    },
  };
}

export type Failpoints = ReturnType<typeof createFailpoints>;
