import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/**
 * Which queue job the running code works for, without passing it through every call: the apply-job
 * use case runs each job inside its scope, and code far below that needs to tell one job's work
 * from another's (an adapter recognising a retry of the same job as its own) reads it here.
 * Nothing above that code names it, so the storage port stays free of any adapter's mechanism.
 */
export const jobScope = {
  /** Runs `work` as part of the job `jobKey` (its dedupe key): everything it awaits or starts too. */
  run: <T>(jobKey: string, work: () => Promise<T>): Promise<T> => current.run(jobKey, work),
  /** The job the caller runs for, or undefined outside any job (an API request, a script). */
  current: (): string | undefined => current.getStore(),
};
