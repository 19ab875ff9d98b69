import fc from 'fast-check';

/**
 * FC_SEED=<integer> runs every property of the suite from that seed (fast-check prints the seed of a
 * failing run), so a counterexample replays, and a property can be run from seeds of one's own.
 */
export function useFastCheckSeed(value = process.env.FC_SEED): void {
  if (value === undefined || value === '') return;
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED: expected an integer, got "${value}"`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
