import type pg from 'pg';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { groupCommit } from '../../../shared/async/group-commit.ts';
import {
  DELETED_USER_NAME,
  recordKey,
  type Activity,
  type MembershipChange,
  type ProfileChange,
} from '../../domain/activity.ts';
import { spanOfJoin, type MembershipEdge } from '../../domain/membership-intervals.ts';
import type { InboxRecord } from '../../domain/inbox-record.ts';
import type { TrayWritesPort, WriteContext } from '../port.ts';
import type { Removal } from '../../domain/removal.ts';
import { applyRemovals } from './apply-removals.ts';
import { recordRemovalOutcome } from './postgres-removal-outcomes.ts';
import { inTransaction } from './in-transaction.ts';
import { storableJson } from '../../domain/storable-json.ts';
import { groupLock, lockKeys, memberLock, postLock, profileLock } from './lock-keys.ts';
import { postsOf, withoutVoided } from './voided-actions.ts';
import { insertChanges, memberId, refoldMemberships, type Member } from './postgres-memberships.ts';
import { personalActionsInSpan } from './personal-actions.ts';
import { upsertGroupActors, upsertGroupRecords, type Deliveries } from './upsert-group-records.ts';
import {
  restampedOr,
  writtenAfterCommit,
  type MemberRange,
  type UnreturnedParts,
} from './written-after-commit.ts';
import { SETTLE_MS } from '../../domain/settle-window.ts';
import { waitForWriters } from './wait-for-writers.ts';
import { lateLeavers } from './late-leavers.ts';
import { renameInRecords, renameKeptActivities } from './deleted-users.ts';
import { writeClock } from '../write-clock.ts';
import { forgetKeptState } from './postgres-deleted-users.ts';

/** Records per onWritten call: a fan-out to many members never hands them all over at once. */
export const WRITTEN_BATCH = 1_000;

/**
 * Members one statement of a community's fan-out writes at most (writeInParts) unless
 * TRAY_FANOUT_BATCH says otherwise: about 0.2 s of work on a 2-vCPU VM, so even a community of
 * millions stays far inside PG_STATEMENT_TIMEOUT_MS.
 */
export const FAN_OUT_MEMBERS_PER_STATEMENT = 10_000;

/**
 * Records a fan-out, or the deletion of a community's post, holds from its statements until its
 * commit, give or take one part of membersPerFanOutStatement members: about 40 MB (some 800 bytes
 * a record). Its later parts' records are not held and are read back after the commit
 * (written-after-commit.ts), so a community of millions is told in batches like any other.
 */
export const FAN_OUT_RECORDS_HELD = 50_000;

/** Stored posts applied per statement of a late join's backfill. */
export const BACKFILL_BATCH = 50;

/** applyPersonal calls written by one transaction at most. */
export const PERSONAL_BATCH = 128;

/**
 * Activities written by one transaction at most, whatever their calls: 128 calls of a mention of
 * thousands, each a part of PERSONAL_ACTIVITIES_PER_WRITE, made one transaction of 64,000 that
 * locked nearly every bucket (lock-keys.ts) for its whole length. A call larger than this still
 * goes alone.
 */
export const PERSONAL_ACTIVITIES_PER_TRANSACTION = 2_000;

/**
 * Members whose joins and leaves one transaction stores and folds, and whose records one leave's
 * transaction computes again. Each member's are their own (a member's lock, their rows), so a join
 * of thousands is applied as parts one after another, each as if an event of its own: a retry
 * redoes them all, each a no-op for what it already did. Its locks (lock-keys.ts: a transaction of
 * many keys locks whole buckets, which every writer may need) are then held for one part at a time.
 */
export const MEMBERS_PER_TRANSACTION = 500;

/**
 * Activities of one applyPersonal call handed to one grouped write: a post mentioning thousands is
 * written in parts, each holding its locks for that part only (and for the few other calls its
 * transaction carries: PERSONAL_ACTIVITIES_PER_TRANSACTION). A redelivered part changes nothing.
 */
export const PERSONAL_ACTIVITIES_PER_WRITE = 500;

/** One applyPersonal call waiting for its batch. */
interface PersonalCall {
  activities: readonly Activity[];
  context: WriteContext;
}

/** What one grouped write is told: the clock, the retention, and whether to return the records. */
interface GroupWrite {
  now: number;
  /**
   * The write's clock (WriteContext.clock): read once the write holds its locks, so what it
   * stamps (changedAt, unreadAt) is no older than its wait behind another write's locks.
   */
  clock?: () => number;
  retentionMs: number;
  returning: boolean;
}

/** What a grouped write wrote: the records it returned, and the parts it read back after commit. */
interface Written {
  records: InboxRecord[];
  unreturned?: UnreturnedParts;
}

/** The clock of a batch of calls: every worker's is the same wall clock, so any call's that has one. */
function clockOf(batch: readonly PersonalCall[]): Pick<GroupWrite, 'clock'> {
  const clock = batch.find((call) => call.context.clock)?.context.clock;
  return clock ? { clock } : {};
}

async function tell(context: WriteContext, records: readonly InboxRecord[]): Promise<void> {
  if (!context.onWritten) return;
  for (let start = 0; start < records.length; start += WRITTEN_BATCH)
    await context.onWritten(records.slice(start, start + WRITTEN_BATCH));
}

/**
 * How long after its stamp a state may still be told as it was written. A live stream counts
 * every change stamped more than SETTLE_MS before the newest it delivered as delivered, and a
 * resumed stream looks back no further: a state told later was lost to a stream that delivered a
 * later change meanwhile. A second short of the window: for telling the batch, and the clocks'
 * difference. Stamping anew is a second write of each record (about as long as the fan-out's own
 * statements on 100,000 members), so no earlier than needed.
 */
const TELL_AS_WRITTEN_MS = SETTLE_MS - 1_000;

/**
 * Tells what a committed write changed: the records it returned, then the parts it read back
 * (writtenAfterCommit), a batch at a time. A large fan-out or deletion commits seconds after the
 * stamp it took with its locks, and tells its last batches later still: each batch told past
 * TELL_AS_WRITTEN_MS after its stamp is stamped anew first (restamped: its changed_at alone), so
 * every stream gets it within its window, whatever it delivered meanwhile.
 */
async function tellWritten(
  pool: pg.Pool,
  context: WriteContext,
  records: readonly InboxRecord[],
  parts: readonly UnreturnedParts[],
): Promise<void> {
  if (!context.onWritten) return;
  const clock = writeClock(context);
  const late = (stamp: number) => {
    const at = clock();
    return at - stamp > TELL_AS_WRITTEN_MS ? at : undefined;
  };
  for (let start = 0; start < records.length; start += WRITTEN_BATCH) {
    const batch = records.slice(start, start + WRITTEN_BATCH);
    const stamp = batch.reduce((oldest, record) => Math.min(oldest, record.changedAt), Infinity);
    const at = late(stamp);
    await context.onWritten(
      at === undefined
        ? batch
        : await restampedOr(
            pool,
            { userIds: batch.map((record) => record.userId), keys: batch.map((record) => record.key) },
            stamp,
            at,
            async () => batch,
          ),
    );
  }
  for (const part of parts)
    for await (const batch of writtenAfterCommit(pool, part, WRITTEN_BATCH, () => late(part.since)))
      await context.onWritten(batch);
}

/** Each action once (a job may carry one twice), in a stable order. */
function distinctActions(activities: readonly Activity[]): Activity[] {
  const seen = new Map<string, Activity>();
  for (const activity of activities) {
    const audience = activity.audience.kind === 'user' ? activity.audience.userId : '';
    seen.set(JSON.stringify([activity.verb, activity.targetId, activity.lastActionId, audience]), activity);
  }
  return [...seen.values()];
}

/** The changes in parts of MEMBERS_PER_TRANSACTION members at most, a member's in one, in key order. */
function memberParts(changes: readonly MembershipChange[]): MembershipChange[][] {
  const byMember = new Map<string, MembershipChange[]>();
  for (const change of changes) {
    const id = memberId(change);
    byMember.set(id, [...(byMember.get(id) ?? []), change]);
  }
  const members = [...byMember.keys()].sort();
  const parts: MembershipChange[][] = [];
  for (let start = 0; start < members.length; start += MEMBERS_PER_TRANSACTION)
    parts.push(members.slice(start, start + MEMBERS_PER_TRANSACTION).flatMap((id) => byMember.get(id) ?? []));
  return parts;
}

/**
 * The worker's side of the tray on PostgreSQL. Each write is one transaction that locks its
 * record groups (lock-keys.ts), adds the actions to the groups' actors, then recomputes every
 * recipient's record with one set-based upsert (upsert-group-records.ts); live streams are told
 * after commit. Personal activities of concurrent calls share one such transaction.
 */
export function createPostgresWrites(
  pool: pg.Pool,
  {
    membersPerFanOutStatement = FAN_OUT_MEMBERS_PER_STATEMENT,
    recordsHeld = FAN_OUT_RECORDS_HELD,
  }: { membersPerFanOutStatement?: number; recordsHeld?: number } = {},
): TrayWritesPort {
  const retentionMsOf = (context: WriteContext) => context.retentionDays * DAY_MS;

  const groupWriteOf = (context: WriteContext): GroupWrite => ({
    now: context.now,
    ...(context.clock ? { clock: context.clock } : {}),
    retentionMs: retentionMsOf(context),
    returning: context.onWritten !== undefined,
  });

  /**
   * A community's fan-out as one statement per membersPerFanOutStatement members, by id, in the
   * caller's transaction: each statement stays well inside the statement timeout and sorts its
   * rows in memory however large the community. Each member is met by exactly one statement, so
   * what each statement's own snapshot shows of a member (a join committed meanwhile) is as
   * consistent as one statement's; leaves wait for the fan-out (the group lock). Once it holds
   * recordsHeld records, the later parts return none: their ranges are read back after commit.
   */
  async function writeInParts(
    client: pg.PoolClient,
    activities: readonly Activity[],
    deliveries: Extract<Deliveries, { kind: 'community' }>,
    options: GroupWrite,
  ): Promise<Written> {
    const written: InboxRecord[] = [];
    const unreturned: MemberRange[] = [];
    let after: string | null = null;
    for (;;) {
      // The id that ends this part: the last of the next membersPerFanOutStatement membership rows
      // (a member back after leaving has several), none when fewer are left.
      const end: pg.QueryResult<{ user_id: string }> = await client.query(
        `SELECT user_id FROM tray_memberships
         WHERE community_id = $1 AND ($2::text IS NULL OR user_id > $2)
         ORDER BY user_id OFFSET $3 LIMIT 1`,
        [deliveries.communityId, after, membersPerFanOutStatement - 1],
      );
      const through = end.rows[0]?.user_id ?? null;
      const returning = options.returning && written.length < recordsHeld;
      const part = await upsertGroupRecords(
        client,
        activities,
        { ...deliveries, members: { after, through } },
        { ...options, returning },
      );
      for (const record of part) written.push(record);
      if (options.returning && !returning) unreturned.push({ after, through });
      if (through === null) {
        const [first] = activities;
        return unreturned.length === 0 || !first
          ? { records: written }
          : {
              records: written,
              unreturned: {
                communityId: deliveries.communityId,
                verb: first.verb,
                targetId: first.targetId,
                ranges: unreturned,
                since: options.now,
              },
            };
      }
      after = through;
    }
  }

  async function writeGroups(
    activities: readonly Activity[],
    deliveries: Deliveries,
    { now, clock, retentionMs, returning }: GroupWrite,
  ): Promise<Written> {
    return inTransaction(pool, async (client) => {
      // JIT compiling a fan-out's upsert costs more (about 0.3 s) than running it on 10,000 rows,
      // and its sort by key stays in memory. Personal writes are planned once per connection
      // (prepared statements) for a few rows: neither applies.
      if (deliveries.kind === 'community')
        await client.query("SET LOCAL jit = off; SET LOCAL work_mem = '64MB'");
      // A member's lock, shared, for each action on a community's target addressed to them: a
      // join or leave of theirs (exclusive) is stored either before this reads their away spans,
      // or after this commits, when its backfill or recomputation reads the action kept here.
      // And each action's post, shared: a removal of the post waits for this write, or this
      // write reads its tombstone (voided-actions.ts). And the profiles of each actor and of each
      // one recipient, shared: a deletion of one of them commits before this reads the profiles
      // (and the write leaves them out, or names them deleted), or after this commits, when it
      // finds what this wrote (docs/tray-rules.md#deleted-users). A fan-out's members are not
      // locked, thousands of them: a deletion waits for the fan-outs of its user's communities.
      await lockKeys(
        client,
        activities.map((activity) => groupLock(activity.verb, activity.targetId)),
        [
          ...activities.flatMap((activity) =>
            activity.audience.kind === 'user' && activity.communityId !== undefined
              ? [memberLock(activity.communityId, activity.audience.userId)]
              : [],
          ),
          ...postsOf(activities).map(postLock),
          ...activities.flatMap((activity) => [
            profileLock(activity.actor.userId),
            ...(activity.audience.kind === 'user' ? [profileLock(activity.audience.userId)] : []),
          ]),
        ],
      );
      const live = await withoutVoided(client, activities);
      await upsertGroupActors(client, live, retentionMs);
      // Stamped now that the locks are held: a stream takes a change stamped SETTLE_MS before the
      // newest it sent for one it had, and a write that waited seconds behind a fan-out's locks
      // would land with such a stamp (docs/live-tray.md#event-ids-and-resuming).
      const options = { now: writeClock({ now, clock })(), retentionMs, returning };
      const written =
        deliveries.kind === 'community' && !deliveries.only
          ? await writeInParts(client, live, deliveries, options)
          : { records: await upsertGroupRecords(client, live, deliveries, options) };
      if (deliveries.kind !== 'community' || live.length === 0) return written;
      // Those whose leave covering a post was processed after the post took its place (in its keep,
      // before this transaction, or at its first delivery): the memberships the statement above
      // read leave them out, yet the leave takes nothing back. Looked for after it, in the same
      // transaction: a leave that committed before that statement's snapshot is found here, one
      // after it left its user in the memberships the statement read (a user found here the
      // statement reached too has their record as it is, unchanged: nothing written).
      const users = await lateLeavers(
        client,
        deliveries.communityId,
        live.map((activity) => activity.lastActionId),
        deliveries.only,
      );
      if (users.length === 0) return written;
      const late = await upsertGroupRecords(
        client,
        live,
        { kind: 'lateLeavers', communityId: deliveries.communityId, users },
        options,
      );
      return { ...written, records: [...written.records, ...late] };
    });
  }

  async function fanOut(
    communityId: string,
    posts: readonly Activity[],
    context: WriteContext,
    only?: readonly string[],
  ): Promise<void> {
    // One statement per record group (a community's posts share one: the `post` record).
    const groups = new Map<string, Activity[]>();
    for (const post of distinctActions(posts)) {
      const key = JSON.stringify([post.verb, post.targetId]);
      groups.set(key, [...(groups.get(key) ?? []), post]);
    }
    for (const group of groups.values()) {
      const deliveries: Deliveries = { kind: 'community', communityId, ...(only ? { only } : {}) };
      const { records, unreturned } = await writeGroups(group, deliveries, groupWriteOf(context));
      await tellWritten(pool, context, records, unreturned ? [unreturned] : []);
    }
  }

  /**
   * A join stored after what falls inside the membership it opened gives the member that
   * (docs/tray-rules.md#leaving-and-rejoining-a-community): the community's kept posts in the span
   * (spanOfJoin, by the processing order: a leave stored since the join, as by a retry of this job,
   * does not shorten it; no further back than retention, no more than a day ahead), applied to that
   * member alone by the same fan-out statement, and the kept actions on the community's targets
   * addressed to the member (held back while they were away), applied as personal activities.
   * Both are no-ops for what the member already has.
   */
  async function backfill(
    joins: readonly MembershipChange[],
    edges: ReadonlyMap<string, readonly MembershipEdge[]>,
    context: WriteContext,
  ): Promise<void> {
    const oldest = context.now - retentionMsOf(context);
    for (const join of joins) {
      const span = spanOfJoin(edges.get(memberId(join)) ?? [], join.at);
      if (!span) continue;
      const from = Math.max(span.from, oldest);
      const to = Math.min(span.to, context.now + DAY_MS);
      if (from >= to) continue;
      // A page at a time, after the last one's (at, action_id): a late or replayed join in a busy
      // community spans up to TRAY_RETENTION_DAYS of posts, which read whole would be held in
      // memory per join. Ties on `at` are ordered by the id, so no page splits one or repeats it.
      let after: { at: number; actionId: string } = { at: from, actionId: '' };
      for (;;) {
        const found = await pool.query<{ activity: Activity; at: string; action_id: string }>(
          `SELECT activity, at, action_id FROM tray_community_posts
           WHERE community_id = $1 AND at >= $2 AND at < $3 AND (at, action_id) > ($4, $5 COLLATE "C")
           ORDER BY at, action_id LIMIT $6`,
          [join.communityId, from, to, after.at, after.actionId, BACKFILL_BATCH],
        );
        const last = found.rows.at(-1);
        if (!last) break;
        const batch = found.rows.map((row) => row.activity);
        await fanOut(join.communityId, batch, context, [join.userId]);
        if (found.rows.length < BACKFILL_BATCH) break;
        after = { at: Number(last.at), actionId: last.action_id };
      }
      const addressed = await personalActionsInSpan(pool, join.userId, join.communityId, from, to);
      for (let start = 0; start < addressed.length; start += BACKFILL_BATCH) {
        const [records = []] = await personalBatches([
          { activities: addressed.slice(start, start + BACKFILL_BATCH), context },
        ]);
        await tell(context, records);
      }
    }
  }

  /**
   * The personal activities of every call in the batch, written by one transaction per retention
   * (one in practice): one lock statement, one actors upsert and one records upsert for all of
   * them, as if one job had carried them all. Its clock is the latest of the calls'. Each call gets
   * the records of its own activities.
   */
  async function writePersonal(calls: readonly PersonalCall[]): Promise<InboxRecord[][]> {
    const results = calls.map((): InboxRecord[] => []);
    const byRetention = new Map<number, number[]>();
    calls.forEach((call, index) => {
      const retentionMs = retentionMsOf(call.context);
      byRetention.set(retentionMs, [...(byRetention.get(retentionMs) ?? []), index]);
    });
    for (const [retentionMs, indexes] of byRetention) {
      const batch = indexes.map((index) => calls[index] as PersonalCall);
      const activities = distinctActions(batch.flatMap((call) => call.activities));
      const { records } = await writeGroups(
        activities,
        { kind: 'personal' },
        {
          now: Math.max(...batch.map((call) => call.context.now)),
          ...clockOf(batch),
          retentionMs,
          returning: batch.some((call) => call.context.onWritten !== undefined),
        },
      );
      if (records.length === 0) continue;
      const byKey = new Map(records.map((record) => [record.key, record]));
      for (const index of indexes) {
        const keys = new Set(
          (calls[index] as PersonalCall).activities.map((activity) =>
            activity.audience.kind === 'user'
              ? recordKey(activity.verb, activity.targetId, activity.audience.userId)
              : '',
          ),
        );
        results[index] = [...keys].flatMap((key) => byKey.get(key) ?? []);
      }
    }
    return results;
  }

  // Concurrent jobs' personal activities share a transaction: its fixed cost (a connection,
  // BEGIN, the locks, three statements, COMMIT) dwarfs what one more activity adds. One batch at
  // a time: the calls that wait meanwhile make the next batch larger, and two batches of a busy
  // group would only wait on each other's locks.
  const personalBatches = groupCommit(writePersonal, {
    maxBatch: PERSONAL_BATCH,
    maxWeight: PERSONAL_ACTIVITIES_PER_TRANSACTION,
    weigh: (call: PersonalCall) => call.activities.length,
    maxInFlight: 1,
    isolateFailures: true,
  });

  async function applyMembershipChanges(
    changes: readonly MembershipChange[],
    context: WriteContext,
  ): Promise<Map<string, MembershipEdge[]>> {
    const edges = new Map<string, MembershipEdge[]>();
    for (const part of memberParts(changes)) {
      const members: Member[] = part.map(({ communityId, userId }) => ({ communityId, userId }));
      const partEdges = await inTransaction(pool, async (client) => {
        // A leave takes its place (the sequence) when inserted and is seen when it commits; a post
        // kept in between has a later place yet its fan-out would not see the leave. So a leave holds
        // its community's `post` group lock, shared, until it commits: a fan-out (exclusive) of a
        // post placed after the leave waits, and reads it (docs/postgres-tray-records.md).
        await lockKeys(
          client,
          members.map((member) => memberLock(member.communityId, member.userId)),
          [...new Set(part.filter((change) => !change.active).map((change) => change.communityId))].map(
            (communityId) => groupLock('post', communityId),
          ),
        );
        await insertChanges(client, part, context.now);
        return refoldMemberships(client, members, context.now - retentionMsOf(context));
      });
      for (const [id, changes] of partEdges) edges.set(id, changes);
    }
    return edges;
  }

  /**
   * Removals in one transaction, the records they change told; what they changed recorded under
   * `eventKey` when given (in the same transaction: what is recorded is exactly what committed).
   */
  async function remove(
    removals: readonly Removal[],
    context: WriteContext,
    eventKey?: string,
  ): Promise<void> {
    if (removals.length === 0) return;
    const retentionMs = retentionMsOf(context);
    const { written, removed, unreturned } = await inTransaction(pool, async (client) => {
      const applied = await applyRemovals(client, removals, {
        now: context.now,
        clock: context.clock,
        retentionMs,
        membersPerStatement: membersPerFanOutStatement,
        recordsHeld: context.onWritten ? recordsHeld : 0,
      });
      if (eventKey !== undefined)
        await recordRemovalOutcome(client, eventKey, applied, context.now + retentionMs);
      return applied;
    });
    // The records it removed first: telling the others may read and write after the commit, which
    // can fail, and a retry of the job finds nothing left to remove and tells nothing; the removal
    // log is all a resuming stream learns them from.
    if (removed.length > 0 && context.onRemoved) await context.onRemoved(removed);
    await tellWritten(pool, context, written, unreturned);
  }

  /**
   * A community's voided posts that a fan-out may have kept: their deletions applied once more,
   * which now find the kept copies (apply-removals.ts, KEPT_POST), so the copies go and every
   * `post` record of the community that an exact count may have counted them in is computed again
   * (none voided: no statement). Not recorded under the fan-out's event: these are the deletions'.
   */
  async function removeKept(communityId: string, voided: readonly Activity[], context: WriteContext) {
    await remove(
      voided.map((post) => ({
        kind: 'post' as const,
        id: post.lastActionId,
        postId: post.lastActionId,
        at: context.now,
        communityId,
      })),
      context,
    );
  }

  return {
    async applyPersonal(activities, context) {
      if (activities.length === 0) return;
      // Text and jsonb hold neither U+0000 nor a lone surrogate: replaced by U+FFFD (the same
      // objects back when none has any) instead of failing the job on every retry.
      const personal = storableJson(activities.filter((activity) => activity.audience.kind === 'user'));
      if (personal.length === 0) return;
      for (let start = 0; start < personal.length; start += PERSONAL_ACTIVITIES_PER_WRITE) {
        const part = personal.slice(start, start + PERSONAL_ACTIVITIES_PER_WRITE);
        const [records = []] = await personalBatches([{ activities: part, context }]);
        await tell(context, records);
      }
    },

    async fanOutPosts(communityId, posts, context) {
      if (posts.length === 0) return;
      // Kept first, in a transaction of its own: a join committed before this fan-out reads the
      // memberships is in them, and one committed after finds the post (see backfill). The keep
      // gives each post its place in the processing order (a redelivery keeps the first): a leave
      // committed after it takes the post from no one (lateLeavers, in writeGroups).
      const retentionMs = retentionMsOf(context);
      // A post its removal came before is a no-op: not kept for a late join either. Nor left kept
      // by an earlier try of this job that kept it, then failed before the check at the end below
      // (a deletion committed in between found no action of the post to void).
      const given = storableJson(posts);
      const live = await withoutVoided(pool, given);
      await removeKept(
        communityId,
        given.filter((post) => !live.includes(post)),
        context,
      );
      const kept = distinctActions(live);
      if (kept.length === 0) return;
      await pool.query(
        `INSERT INTO tray_community_posts (community_id, action_id, at, activity, expires_at)
         SELECT $1, a->>'lastActionId', (a->>'at')::bigint, a, (a->>'at')::bigint + $3
         FROM jsonb_array_elements($2::jsonb) AS a
         ORDER BY 2
         ON CONFLICT (community_id, action_id) DO NOTHING`,
        [communityId, JSON.stringify(kept), retentionMs],
      );
      await fanOut(communityId, kept, context);
      // A deletion that committed between the check above and the insert found neither an action
      // of the post nor its kept copy, so it left the copy, which late joins read and which another
      // post's fan-out may have counted exactly meanwhile. The fan-out saw its tombstone under the
      // post's lock and wrote nothing; the deletion is applied again now, which finds the copy. A
      // deletion after the insert finds the copy (and any action) itself.
      const after = await withoutVoided(pool, kept);
      await removeKept(
        communityId,
        kept.filter((post) => !after.includes(post)),
        context,
      );
    },

    async applyMemberships(changes, context) {
      if (changes.length === 0) return;
      const edges = await applyMembershipChanges(changes, context);
      // A join adds the time it opens (its span), for every join, a redelivered one too: a job
      // that stored its change and failed before this step does it when retried. A leave changes
      // no record: it only stops what is processed after it (its place in tray_processed), so a
      // leave processed late takes nothing back (docs/tray-rules.md#leaving-and-rejoining-a-community).
      await backfill(
        changes.filter((change) => change.active),
        edges,
        context,
      );
    },

    async applyRemovals(removals, context) {
      await remove(removals, context, context.eventKey);
    },

    async applyProfiles(changes, context) {
      if (changes.length === 0) return;
      const ordered = profilesToStore(changes);
      const ids = ordered.filter((change) => change.deleted).map((change) => change.userId);
      if (ids.length === 0) {
        await storeProfiles(pool, ordered);
        return;
      }
      // The deletion holds its users' profile locks until its profiles and their snapshots are
      // stored together: a write of theirs that takes the locks after reads them deleted.
      const named = await inTransaction(pool, async (client) => {
        await lockKeys(client, ids.map(profileLock));
        await storeProfiles(client, ordered);
        await client.query('DELETE FROM tray_records WHERE user_id = ANY($1::text[])', [ids]);
        // The group actors and the kept actions first, so records computed later name them as
        // deleted too.
        for (const table of ['tray_target_actors', 'tray_group_actions'])
          await client.query(
            `UPDATE ${table} SET name = $2, image_url = NULL, avatar_custom_url = NULL, actor_deleted = true
             WHERE actor_id = ANY($1::text[])
               AND (name <> $2 OR image_url IS NOT NULL OR avatar_custom_url IS NOT NULL OR NOT actor_deleted)`,
            [ids, DELETED_USER_NAME],
          );
        await renameKeptActivities(client, ids);
        // The record groups that name them (tray_target_actors_actor).
        const groups = await client.query<{ verb: string; target_id: string }>(
          'SELECT DISTINCT verb, target_id FROM tray_target_actors WHERE actor_id = ANY($1::text[])',
          [ids],
        );
        return groups.rows.map((row) => groupLock(row.verb, row.target_id));
      });
      // What they kept for themselves goes with their tray, once the deletion is committed
      // (forgetKeptState says why not before).
      await forgetKeptState(pool, ids);
      // A deleted user leaves every community they have a change or an imported membership in.
      const communities = await pool.query<{ community_id: string; user_id: string }>(
        `SELECT DISTINCT community_id, user_id FROM (
           SELECT community_id, user_id FROM tray_membership_changes WHERE user_id = ANY($1::text[])
           UNION SELECT community_id, user_id FROM tray_imported_members WHERE user_id = ANY($1::text[])) AS m`,
        [ids],
      );
      const at = Math.max(...ordered.filter((change) => change.deleted).map((change) => change.at));
      await applyMembershipChanges(
        communities.rows.map((row) => ({
          communityId: row.community_id,
          userId: row.user_id,
          active: false,
          at,
        })),
        context,
      );
      // A write that read the profiles or the group actors before the deletion committed may still
      // be writing a record that names a deleted user as before, and a fan-out of one of their
      // communities one in their tray: the deletion waits for the writers of those groups (each
      // holds its groups' locks until it commits), then deletes the tray once more and rewrites the
      // records, once, after them all. Every write that begins later reads the deletion.
      await waitForWriters(pool, [
        ...named,
        ...communities.rows.map((row) => groupLock('post', row.community_id)),
      ]);
      await pool.query('DELETE FROM tray_records WHERE user_id = ANY($1::text[])', [ids]);
      // Expired records are renamed too while their group lives (none keeps the name), and told
      // like the others: which of them live streams hear of is the caller's to decide.
      // Stamped as each page is written, not at the job's start: the wait above may have been long.
      await renameInRecords(pool, ids, writeClock(context), (renamed) => tell(context, renamed));
    },
  };
}

/**
 * The profile to store of each user, in user order: their deletion if the changes hold one (a
 * deletion is final: docs/tray-rules.md#deleted-users), else their latest change.
 */
function profilesToStore(changes: readonly ProfileChange[]): ProfileChange[] {
  const chosen = new Map<string, ProfileChange>();
  for (const change of changes) {
    const seen = chosen.get(change.userId);
    if (
      !seen ||
      (change.deleted && !seen.deleted) ||
      (change.deleted === seen.deleted && seen.at < change.at)
    )
      chosen.set(change.userId, change);
  }
  return [...chosen.values()].sort((a, b) => (a.userId < b.userId ? -1 : 1));
}

/**
 * Stores each user's profile: a newer change replaces an older one, a deletion replaces any, and
 * nothing replaces a deletion (the platform never brings a deleted user back).
 */
async function storeProfiles(db: pg.Pool | pg.PoolClient, ordered: readonly ProfileChange[]): Promise<void> {
  await db.query(
    `INSERT INTO tray_profiles AS t (user_id, display_name, image_url, avatar_custom_url, deleted, updated_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::bigint[])
     ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name,
       image_url = excluded.image_url, avatar_custom_url = excluded.avatar_custom_url,
       deleted = excluded.deleted, updated_at = excluded.updated_at
     WHERE NOT t.deleted AND (excluded.deleted OR t.updated_at < excluded.updated_at)`,
    [
      ordered.map((change) => change.userId),
      ordered.map((change) => change.displayName),
      ordered.map((change) => change.imageUrl ?? null),
      ordered.map((change) => change.avatarCustomUrl ?? null),
      ordered.map((change) => change.deleted),
      ordered.map((change) => change.at),
    ],
  );
}
