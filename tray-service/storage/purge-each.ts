import type { PurgeFailure } from './purge-error.ts';

/** What a part of the purge deleted (the rows it counts), and each table it could not purge. */
export interface PurgeOutcome {
  purged: number;
  failures: PurgeFailure[];
}

/** One table's purge: how many rows it deleted. */
export interface PurgeStep {
  table: string;
  purge: () => Promise<number>;
  /**
   * Earlier steps whose outcome this one reads (the tombstones read the kept actions' expiry as
   * their step leaves it): when one failed, this step waits for the next run, named as a failure.
   */
  needs?: readonly string[];
}

/**
 * Runs each table's (collection's) purge in turn, each on its own: one that fails (a batch
 * cancelled by the statement timeout, a lost connection) is noted and the next one purged, so
 * one table never keeps the others' expired rows. Counts the rows of the `counted` table. Both
 * adapters purge through it.
 */
export async function purgeEach(steps: readonly PurgeStep[], counted: string): Promise<PurgeOutcome> {
  const outcome: PurgeOutcome = { purged: 0, failures: [] };
  for (const { table, purge, needs = [] } of steps) {
    const missing = needs.filter((needed) => outcome.failures.some((failure) => failure.table === needed));
    if (missing.length > 0) {
      const error = new Error(
        `not purged this time: it needs ${missing.join(', ')} purged first, which failed`,
      );
      outcome.failures.push({ table, error });
      continue;
    }
    try {
      const purged = await purge();
      if (table === counted) outcome.purged = purged;
    } catch (error) {
      outcome.failures.push({ table, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }
  return outcome;
}
