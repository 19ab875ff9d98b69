import type { Db } from 'mongodb';
import { TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import { deleteByIds } from '../driver/delete-by-ids.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';

/** A kept action a removal voids, as read by its post. */
export interface VoidedAction extends Pick<TargetActionDoc, '_id' | 'group' | 'activity' | 'expiresAt'> {
  postId: string;
}

/**
 * Takes the voided actions out of the kept actions, by _id (idempotent). The group actors follow
 * from the removal's work notes (repair-group-actors.ts), which a retry still finds once these
 * are gone. Returns how many this call took out: two runs of one removal at once both read the
 * actions before either deletes them, and only the deletions say which run took out which.
 */
export async function takeOutVoided(db: Db, voided: readonly VoidedAction[]): Promise<number> {
  return deleteByIds(
    db,
    TRAY_TARGET_ACTIONS,
    voided.map((action) => action._id),
  );
}
