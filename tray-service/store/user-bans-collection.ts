import type { CollectionSpec } from '../../shared/mongo/collection-spec.ts';
import { USER_BANS } from './ban-store.ts';

/** user_bans: each user's latest global ban state (ban-store.ts); read whole only at start-up. */
export const userBansCollection: CollectionSpec = {
  name: USER_BANS,
  indexes: [],
  equalityFields: [],
};
