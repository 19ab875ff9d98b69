import { KEPT_EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_MUTES } from './collection-names.ts';
import type { Mute } from '../../../domain/mute.ts';

/**
 * One span of one user's mute (domain/mute.ts), under the key of its owner, target and start, so
 * a span put again at the millisecond it was removed is the same document. Kept until its
 * retention after it ends (`expiresAt`), so deliveries dated inside it stay held back, and past
 * that while a record it judges lives (purge-ended-mutes.ts): no TTL index.
 */
export interface MuteDoc extends Mute {
  _id: string;
  /** muteTargetKey(targetType, targetId): what the writes look mutes up by, all targets in one `$in`. */
  target: string;
  /**
   * The end (until or removal) + TRAY_RETENTION_DAYS, far in the future while it has none; moved
   * by the purge to the expiry of the owner's records it still judges.
   */
  expiresAt: Date;
}

/** The one key of a mute's target (type and id), so a batch's targets are looked up by one `$in`. Pure. */
export const muteTargetKey = (targetType: string, targetId: string) => JSON.stringify([targetType, targetId]);

/** tray_mutes: every user's mute spans, in force and ended. */
export const trayMutesCollection: CollectionSpec = {
  name: TRAY_MUTES,
  indexes: [
    {
      name: 'mute_user',
      key: { userId: 1, createdAt: 1, targetType: 1, targetId: 1 },
      serves:
        'GET mutes: find({userId, createdAt <= now}).sort({createdAt: 1, targetType: 1, targetId: 1}); PUT and DELETE mutes: find({userId, targetType, targetId}); the writes on many targets (a post record’s kept posts): find({userId: {$in: the recipients}}) (muted-deliveries.ts)',
    },
    {
      name: 'mute_target',
      key: { target: 1, userId: 1 },
      serves:
        'the fan-out writes: find({target: {$in: a batch’s targets}}), who muted them, and the writes to few recipients: find({target: {$in}, userId: {$in}}) (muted-deliveries.ts); the events console: the same for a post’s recipients, and find({target: {$in}, userId: {$in}}) for its few personal ones (mongo-community-members.ts)',
    },
    KEPT_EXPIRY_INDEX,
  ],
};
