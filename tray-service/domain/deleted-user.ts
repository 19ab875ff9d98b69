import { DELETED_USER_NAME, type Activity, type ActorInfo } from './activity.ts';

/**
 * A deleted user as every record shows them (docs/tray-rules.md#deleted-users): `Deleted user`,
 * without profile image or custom avatar, marked `deleted` so a message names them in the reader's
 * language (docs/messages.md#deleted-users) while the record's name stays the contract's.
 */
export function deletedActor(userId: string): ActorInfo & { deleted: true } {
  return { userId, name: DELETED_USER_NAME, deleted: true };
}

/**
 * The activities as the tray keeps and counts them once the `deleted` users are gone: an action of
 * one of them created before the deletion but delivered after it shows its actor as deletedActor,
 * as the deletion rewrote their earlier snapshots, so no record and no kept action names them
 * otherwise. Who receives an activity is not judged here (a deleted user receives nothing).
 */
export function withDeletedActors(
  activities: readonly Activity[],
  deleted: ReadonlySet<string>,
): readonly Activity[] {
  if (deleted.size === 0 || !activities.some((activity) => deleted.has(activity.actor.userId)))
    return activities;
  return activities.map((activity) =>
    deleted.has(activity.actor.userId)
      ? { ...activity, actor: deletedActor(activity.actor.userId) }
      : activity,
  );
}

/**
 * Whether a snapshot already shows its user as deletedActor does: marked deleted, that name, and no
 * image. One written before snapshots carried the mark does not, so the deletion is applied to it
 * again (idempotent) and it gains the mark.
 */
export function showsDeleted(
  actor: Pick<ActorInfo, 'name' | 'imageUrl' | 'avatarCustomUrl' | 'deleted'>,
): boolean {
  return (
    actor.deleted === true && actor.name === DELETED_USER_NAME && !actor.imageUrl && !actor.avatarCustomUrl
  );
}
