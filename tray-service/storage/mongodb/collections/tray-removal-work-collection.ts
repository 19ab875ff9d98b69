import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_REMOVAL_WORK } from './collection-names.ts';

/** tray_removal_work: record groups whose records a removal still has to compute again (apply-removals.ts). */
export const trayRemovalWorkCollection: CollectionSpec = {
  name: TRAY_REMOVAL_WORK,
  indexes: [
    {
      name: 'work_post',
      key: { postId: 1 },
      serves:
        'find({postId}) in applyRemovals: what a removal on that post, or an earlier try of it, left to do',
    },
    EXPIRY_INDEX,
  ],
};

/**
 * One record group a removal took actions out of, written before they are taken out and deleted
 * once the group's actors are repaired and its records computed again: a job that fails in between
 * finds it when retried (the actions are gone by then, so nothing else would say which actors and
 * records to compute again).
 */
export interface RemovalWorkDoc {
  /** sha256 of JSON [group, the voided actions' ids]: the same removal writes it once. */
  _id: string;
  /** The post the voided actions were on. */
  postId: string;
  /** recordGroup(verb, targetId) of the records to compute again. */
  group: string;
  /** The voided actions' ids (lastActionId). */
  voided: string[];
  /**
   * The voided actions' latest expiry, which the group's actors left keep (repair-group-actors.ts).
   * Absent from notes written before it was kept.
   */
  keepUntil?: Date;
  expiresAt: Date;
}
