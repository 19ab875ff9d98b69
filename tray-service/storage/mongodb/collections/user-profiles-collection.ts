import type { CollectionSpec } from './collection-spec.ts';
import { USER_PROFILES } from './collection-names.ts';

/** user_profiles: the latest known profile of each user, read and written by `_id` only. */
export const userProfilesCollection: CollectionSpec = {
  name: USER_PROFILES,
  indexes: [],
};

/** user_profiles: the latest known profile of each user (user.didUpdate / user.didDelete). */
export interface UserProfileDoc {
  /** The user id. */
  _id: string;
  displayName: string;
  imageUrl?: string;
  avatarCustomUrl?: string;
  deleted: boolean;
  /** Epoch ms (receivedAt) of the change applied; older deliveries are ignored. */
  updatedAt: number;
}
