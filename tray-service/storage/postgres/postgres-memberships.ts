import type pg from 'pg';
import type { MembershipChange } from '../../domain/activity.ts';
import {
  awaySpans,
  membershipIntervals,
  prunableChanges,
  pruneCutoff,
  type MembershipEdge,
} from '../../domain/membership-intervals.ts';

/** to_at of a membership interval or away span still open (tray_memberships, tray_member_away). */
export const OPEN_END = '9223372036854775807';

/**
 * The users of the community `community` (an SQL expression) who may hold its `post` record, each
 * once: everyone with a membership interval or an away span there. The intervals alone miss a
 * member whose joins and leaves fold into none (a join and a leave in one millisecond) yet who
 * holds posts by the processing order: a join processed after a post adds it, a leave processed
 * after one takes nothing back (memberFor). Every user with a change has an interval or a span.
 * With `after` and `limit` (SQL expressions), the page of them after that user id, in id order:
 * each table is read by its primary key, a page at most.
 */
export function postHoldersSql(community: string, page?: { after: string; limit: string }): string {
  const of = (table: string) =>
    page
      ? `(SELECT DISTINCT user_id FROM ${table} WHERE community_id = ${community} AND user_id > ${page.after}
          ORDER BY user_id LIMIT ${page.limit})`
      : `SELECT user_id FROM ${table} WHERE community_id = ${community}`;
  const both = `${of('tray_memberships')} UNION ${of('tray_member_away')}`;
  return page ? `${both} ORDER BY user_id LIMIT ${page.limit}` : both;
}

export interface Member {
  communityId: string;
  userId: string;
}

const memberId = (member: Member) => JSON.stringify([member.communityId, member.userId]);

/** Members de-duplicated and in key order: every multi-row statement touches rows in that order. */
export function sortedMembers(members: readonly Member[]): Member[] {
  const byId = new Map(members.map((member) => [memberId(member), member]));
  return [...byId.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, member]) => ({ communityId: member.communityId, userId: member.userId }));
}

/**
 * Stores joins and leaves once each (a redelivery inserts nothing, its first processing time
 * kept), rows in key order, with `now` as their processing time.
 */
export async function insertChanges(
  client: pg.PoolClient,
  changes: readonly MembershipChange[],
  now: number,
): Promise<void> {
  if (changes.length === 0) return;
  await client.query(
    `INSERT INTO tray_membership_changes (community_id, user_id, at, joined, processed_at)
     SELECT DISTINCT *, $5::bigint FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[])
     ORDER BY 1, 2, 3, 4
     ON CONFLICT DO NOTHING`,
    [
      changes.map((change) => change.communityId),
      changes.map((change) => change.userId),
      changes.map((change) => change.at),
      changes.map((change) => change.active),
      now,
    ],
  );
}

/**
 * Re-folds the membership intervals of `members` from their change log and imported membership
 * (joins at since, as_of and each relisted_at; membershipIntervals: the same whatever order the
 * changes arrived in) and stores them in tray_memberships, where a fan-out joins them, and their
 * away spans (awaySpans) in tray_member_away, which the records of the community's targets leave
 * out. Prunes each member's changes at or before `retentionCutoff` and every countFrom of the
 * user's records (pruneCutoff) that decide nothing any more (prunableChanges): posts that old make
 * no record, and no record counts them. The caller holds the members' locks. Returns each
 * member's changes (imported ones included, pruned ones too) with their places, by memberId: what
 * a join's backfill reads (spanOfJoin).
 */
export async function refoldMemberships(
  client: pg.PoolClient,
  members: readonly Member[],
  retentionCutoff: number,
): Promise<Map<string, MembershipEdge[]>> {
  const changesOf = new Map<string, MembershipEdge[]>();
  if (members.length === 0) return changesOf;
  const sorted = sortedMembers(members);
  const communities = sorted.map((member) => member.communityId);
  const users = sorted.map((member) => member.userId);
  const edges = await client.query<{
    community_id: string;
    user_id: string;
    at: string;
    joined: boolean;
    processed: string;
    processed_at: string | null;
    logged: boolean;
  }>(
    `WITH m AS (SELECT * FROM unnest($1::text[], $2::text[]) AS m(community_id, user_id))
     SELECT c.community_id, c.user_id, c.at, c.joined, c.processed, c.processed_at, true AS logged
     FROM m JOIN tray_membership_changes c USING (community_id, user_id)
     UNION ALL
     SELECT i.community_id, i.user_id, e.at, true, 0, NULL, false
     FROM m JOIN tray_imported_members i USING (community_id, user_id)
     CROSS JOIN LATERAL unnest(ARRAY[i.since, i.as_of] || i.relisted_at) AS e(at)`,
    [communities, users],
  );
  const byMember = new Map<string, { all: MembershipEdge[]; logged: MembershipEdge[] }>(
    sorted.map((member) => [memberId(member), { all: [], logged: [] }]),
  );
  for (const row of edges.rows) {
    const entry = byMember.get(memberId({ communityId: row.community_id, userId: row.user_id }));
    const edge: MembershipEdge = {
      joined: row.joined,
      at: Number(row.at),
      processed: Number(row.processed),
      ...(row.processed_at === null ? {} : { processedAt: Number(row.processed_at) }),
    };
    entry?.all.push(edge);
    if (row.logged) entry?.logged.push(edge);
  }
  const rows = { community: [] as string[], user: [] as string[], from: [] as number[], to: [] as string[] };
  const away = { community: [] as string[], user: [] as string[], from: [] as number[], to: [] as string[] };
  const prune = {
    community: [] as string[],
    user: [] as string[],
    at: [] as number[],
    joined: [] as boolean[],
  };
  const pruning: Member[] = [];
  for (const member of sorted) {
    const entry = byMember.get(memberId(member)) ?? { all: [], logged: [] };
    const intervals = membershipIntervals(entry.all);
    changesOf.set(memberId(member), entry.all);
    for (const interval of intervals) {
      rows.community.push(member.communityId);
      rows.user.push(member.userId);
      rows.from.push(interval.from);
      rows.to.push(interval.to === Infinity ? OPEN_END : String(interval.to));
    }
    for (const span of awaySpans(entry.all)) {
      away.community.push(member.communityId);
      away.user.push(member.userId);
      away.from.push(span.from);
      away.to.push(span.to === Infinity ? OPEN_END : String(span.to));
    }
    if (prunableChanges(entry.logged, retentionCutoff).length > 0) pruning.push(member);
  }
  // The users' records are read only for members the retention alone would prune.
  const oldest = await oldestCountFrom(client, pruning);
  for (const member of pruning) {
    const logged = byMember.get(memberId(member))?.logged ?? [];
    for (const edge of prunableChanges(logged, pruneCutoff(retentionCutoff, oldest.get(member.userId)))) {
      prune.community.push(member.communityId);
      prune.user.push(member.userId);
      prune.at.push(edge.at);
      prune.joined.push(edge.joined);
    }
  }
  for (const [table, spans] of [
    ['tray_memberships', rows],
    ['tray_member_away', away],
  ] as const) {
    await client.query(
      `DELETE FROM ${table} t USING unnest($1::text[], $2::text[]) AS m(community_id, user_id)
       WHERE t.community_id = m.community_id AND t.user_id = m.user_id`,
      [communities, users],
    );
    if (spans.community.length > 0)
      await client.query(
        `INSERT INTO ${table} (community_id, user_id, from_at, to_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])`,
        [spans.community, spans.user, spans.from, spans.to],
      );
  }
  if (prune.community.length > 0)
    await client.query(
      `DELETE FROM tray_membership_changes c
       USING unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[]) AS m(community_id, user_id, at, joined)
       WHERE (c.community_id, c.user_id, c.at, c.joined) = (m.community_id, m.user_id, m.at, m.joined)`,
      [prune.community, prune.user, prune.at, prune.joined],
    );
  return changesOf;
}

/**
 * The oldest count_from among each user's records, expired ones the purge has not reached included
 * (through the primary key's user_id), by user; a user without records has no entry.
 */
async function oldestCountFrom(
  client: pg.PoolClient,
  members: readonly Member[],
): Promise<Map<string, number>> {
  if (members.length === 0) return new Map();
  const { rows } = await client.query<{ user_id: string; oldest: string }>(
    `SELECT user_id, min(count_from) AS oldest FROM tray_records WHERE user_id = ANY($1::text[]) GROUP BY user_id`,
    [[...new Set(members.map((member) => member.userId))]],
  );
  return new Map(rows.map((row) => [row.user_id, Number(row.oldest)]));
}

export { memberId };
