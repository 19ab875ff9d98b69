import type pg from 'pg';
import type { Activity } from '../../domain/activity.ts';
import { activityPost } from '../../domain/activity-post.ts';
import type { Removal } from '../../domain/removal.ts';
import { voidedByAny } from '../../domain/removal-voids.ts';

/** The posts the activities belong to (activity-post.ts), each once. */
export function postsOf(activities: readonly Activity[]): string[] {
  return [...new Set(activities.flatMap((activity) => activityPost(activity) ?? []))];
}

/** The tombstones kept on these posts. */
export async function tombstonesOn(
  client: pg.Pool | pg.PoolClient,
  postIds: readonly string[],
): Promise<Pick<Removal, 'kind' | 'id'>[]> {
  if (postIds.length === 0) return [];
  const found = await client.query<Pick<Removal, 'kind' | 'id'>>({
    name: 'tray_tombstones_on',
    text: 'SELECT kind, id FROM tray_removals WHERE post_id = ANY($1::text[])',
    values: [postIds],
  });
  return found.rows;
}

/**
 * The activities no kept removal voids: an action arriving after its removal (retries, the
 * spool, replay) is a no-op (docs/tray-rules.md#inbox). The rule is the domain's (removal.ts).
 */
export async function withoutVoided(
  client: pg.Pool | pg.PoolClient,
  activities: readonly Activity[],
): Promise<readonly Activity[]> {
  const tombstones = await tombstonesOn(client, postsOf(activities));
  if (tombstones.length === 0) return activities;
  return activities.filter((activity) => !voidedByAny(tombstones, activity));
}
