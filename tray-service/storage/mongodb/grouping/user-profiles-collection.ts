import type { CollectionSpec } from '../setup/collection-spec.ts';
import { USER_PROFILES } from '../collection-names.ts';

/** user_profiles: the latest known profile of each user, read and written by `_id` only. */
export const userProfilesCollection: CollectionSpec = {
  name: USER_PROFILES,
  indexes: [],
};
