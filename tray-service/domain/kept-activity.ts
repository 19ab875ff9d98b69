import type { Activity } from './activity.ts';

/**
 * An activity with its place in the order the tray processed joins, leaves and actions in
 * (docs/tray-rules.md#leaving-and-rejoining-a-community): an action kept for the records'
 * retention carries the place it took when first kept (one kept before the order existed, 1:
 * after every change stored then). An activity without one is being processed now.
 */
export type KeptActivity = Activity & { readonly processed?: number };

/** Where an action stands in the processing order: its kept place, or after everything (now). */
export function processedOf(activity: KeptActivity): number {
  return activity.processed ?? Infinity;
}

/** The activity as the mapping made it, without its place (what is stored as the kept action). */
export function withoutPlace(activity: KeptActivity): Activity {
  const { processed: _processed, ...rest } = activity;
  return rest;
}
