/** Steps of a shutdown, each run to its end whatever the others do. */
export interface ShutdownSteps {
  /** Runs `step`; a failure is kept for finish() instead of cutting the other steps short. */
  run(step: () => unknown): Promise<void>;
  /** Throws every failure kept (onShutdown then logs them and exits 1); nothing when none. */
  finish(): void;
}

/**
 * A failing step (a close whose connection errored) used to reject the whole shutdown at once:
 * the steps after it never ran (the storage left open, requests still draining cut off) and the
 * process exited before the others finished. Each step now runs, and the failures are reported
 * together at the end.
 */
export function shutdownSteps(): ShutdownSteps {
  const failures: unknown[] = [];
  return {
    async run(step) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    },
    finish() {
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) throw new AggregateError(failures, `${failures.length} shutdown steps failed`);
    },
  };
}
