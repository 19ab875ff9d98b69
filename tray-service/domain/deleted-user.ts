import { DELETED_USER_NAME, type Activity, type ActorInfo } from './activity.ts';

/**
 * A deleted user as every record shows them (docs/tray-rules.md#deleted-users): `Deleted user`,
 * without profile image or custom avatar.
 */
export function deletedActor(userId: string): ActorInfo {
  return { userId, name: DELETED_USER_NAME };
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

/** Whether a snapshot already shows its user as deletedActor does: that name, and no image. */
export function showsDeleted(actor: Pick<ActorInfo, 'name' | 'imageUrl' | 'avatarCustomUrl'>): boolean {
  return actor.name === DELETED_USER_NAME && !actor.imageUrl && !actor.avatarCustomUrl;
}
