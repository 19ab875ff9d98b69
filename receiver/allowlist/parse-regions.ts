import { listEntries } from '../../shared/text/list-entries.ts';
import { regionIds, type RegionId } from './regional-addresses.ts';

/**
 * Parses `sg,eu,us` (any subset, any order); an unknown entry throws naming it and the valid ones,
 * an empty one (`sg,,eu`, a variable left unset) naming its place.
 */
export function parseRegions(text: string): RegionId[] {
  const entries = listEntries(text).map((entry) => entry.toLowerCase());
  for (const entry of entries) {
    if (!(regionIds as string[]).includes(entry)) {
      throw new Error(
        `"${entry}" is not a region; expected a comma-separated list of ${regionIds.join(', ')}`,
      );
    }
  }
  if (entries.length === 0) throw new Error(`expected a comma-separated list of ${regionIds.join(', ')}`);
  return [...new Set(entries as RegionId[])];
}
