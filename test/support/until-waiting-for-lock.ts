import type pg from 'pg';

/**
 * Resolves once a session of `applicationName` waits for a lock (pg_stat_activity), as a test
 * holding a table lock needs before it signals that process: it has begun and cannot end. `watcher`
 * must be a client of its own (inside the lock holder's transaction the view would not change);
 * `output` names what the process said when it never gets there.
 */
export async function untilWaitingForLock(
  watcher: pg.Client,
  applicationName: string,
  output: () => string,
  timeoutMs = 15_000,
): Promise<void> {
  for (let waited = 0; ; waited += 50) {
    const { rows } = await watcher.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
      [applicationName],
    );
    if (rows[0]?.n === 1) return;
    if (waited > timeoutMs)
      throw new Error(`${applicationName} never waited for the lock; stderr: ${output()}`);
    await new Promise((wake) => setTimeout(wake, 50));
  }
}
