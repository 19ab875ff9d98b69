import type pg from 'pg';

/**
 * The users of `communityId` with a leave at or before one of the kept posts `actionIds` that was
 * processed after the post took its place (docs/tray-rules.md#leaving-and-rejoining-a-community):
 * a leave stored between a post's keep and its fan-out, or before a redelivery of the post. Such a
 * leave takes nothing back, yet the memberships a fan-out joins (tray_memberships) already leave
 * its user out at the post's time: the fan-out gives these users the post by the processing order
 * instead (upsert-group-records.ts, `lateLeavers` deliveries). For a post kept just now there are
 * none, or the few stored in the moment since: one probe of the index of leaves by place per post,
 * whatever the size of the community. A post no longer kept (removed) has none.
 *
 * `only`: of these users alone (a late join's backfill, a fan-out to the joining member): read by
 * the primary key's (community, user) prefix, not every leave of the community processed after
 * each post, which a backfill of months of posts would read once per post.
 */
export async function lateLeavers(
  client: pg.PoolClient,
  communityId: string,
  actionIds: readonly string[],
  only?: readonly string[],
): Promise<string[]> {
  if (actionIds.length === 0 || only?.length === 0) return [];
  // Prepared once per connection (every fan-out runs it), one statement with `only` and one without.
  const text = (among: string) => `SELECT DISTINCT l.user_id
    FROM unnest($2::text[]) AS a(action_id)
    JOIN tray_community_posts cp ON cp.community_id = $1 AND cp.action_id = a.action_id
    JOIN tray_membership_changes l
      ON l.community_id = $1 ${among} AND NOT l.joined AND l.processed > cp.processed AND l.at <= cp.at
    ORDER BY 1`;
  const found = await client.query<{ user_id: string }>(
    only === undefined
      ? { name: 'tray_late_leavers', text: text(''), values: [communityId, [...actionIds]] }
      : {
          name: 'tray_late_leavers_among',
          text: text('AND l.user_id = ANY($3::text[])'),
          values: [communityId, [...actionIds], [...only]],
        },
  );
  return found.rows.map((row) => row.user_id);
}
