import { DELETED_USER_NAME } from '../../domain/activity.ts';

/**
 * A deleted user's snapshot as SQL (docs/tray-rules.md#deleted-users): named `Deleted user` and
 * marked `deleted`, the mark kept in the `actor_deleted` column of the tables that keep snapshots
 * as columns (tray_target_actors, tray_group_actions) and in the actor of those that keep
 * activities as JSON (tray_personal_actions, tray_community_posts).
 */

/** The name of a deleted user as an SQL literal (a constant of the domain's, without quotes). */
export const DELETED_NAME = `'${DELETED_USER_NAME.replaceAll("'", "''")}'`;

/**
 * A snapshot's `deleted` mark from the boolean `column`: `true`, or NULL where the actor is not
 * deleted, which jsonb_strip_nulls leaves out (the mark is only ever present, as true).
 */
export const deletedMarkSql = (column: string): string => `CASE WHEN ${column} THEN true END`;

/** Whether the stored profile of the user `column` names is deleted: such a user receives nothing. */
export const deletedUserSql = (column: string): string =>
  `EXISTS (SELECT 1 FROM tray_profiles AS gone WHERE gone.user_id = ${column} AND gone.deleted)`;

/** A kept activity's actor as deletedActor makes it (deleted-user.ts), for the user `column`. */
export const deletedActorSql = (column: string): string =>
  `jsonb_build_object('userId', ${column}, 'name', ${DELETED_NAME}::text, 'deleted', true)`;
