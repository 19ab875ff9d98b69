import fc from 'fast-check';

/**
 * FC_SEED=<integer> runs every property of the suite from that seed (fast-check prints the seed of a
 * failing run), so a counterexample replays, and a property can be run from seeds of one's own.
 * With FC_PATH=<path> too (the `path` fast-check prints beside it), only the shrunk counterexample
 * runs: seconds, not the minutes of the runs and the shrinking before it.
 */
export function useFastCheckSeed(value = process.env.FC_SEED, path = process.env.FC_PATH): void {
  if (value === undefined || value === '') return;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED: expected an integer, got "${value}"`);
  const replay = path === undefined || path === '' ? {} : { path, endOnFailure: true };
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed, ...replay });
}
