import { KEPT_EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_REMOVALS } from './collection-names.ts';
import type { Removal } from '../../../domain/removal.ts';

/** tray_removals: one tombstone per removal (tombstones.ts). */
export const trayRemovalsCollection: CollectionSpec = {
  name: TRAY_REMOVALS,
  indexes: [
    {
      name: 'removal_post',
      key: { postId: 1 },
      serves: 'find({postId}) in tombstonesOn: the removals an arriving action on that post meets',
    },
    {
      name: 'removal_community',
      key: { communityId: 1 },
      serves:
        'find({communityId}) in tombstonesMet: the posts removed from a community whose post records a fan-out writes',
    },
    KEPT_EXPIRY_INDEX,
  ],
};

/**
 * A post, comment or reaction the platform deleted, kept for the records' retention and past it
 * while what it voids could be taken again (purge-kept-tombstones.ts: no TTL index): an action it
 * voids that arrives later (retries, the spool, replay) is a no-op (docs/tray-rules.md#inbox).
 * Insert-only: a redelivered removal inserts nothing; the purge moves `expiresAt`.
 */
export interface TombstoneDoc extends Removal {
  /** JSON [kind, id]. */
  _id: string;
  expiresAt: Date;
  /**
   * Set while its removal runs (stored with the tombstone, unset once every record it changes is
   * computed again): a write that met it so cannot rely on it having taken its actions out yet,
   * and applies it again after itself (reapply-removals.ts). Absent: applied.
   */
  applying?: true;
}
