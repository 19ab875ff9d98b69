import { expect } from 'chai';
import fc from 'fast-check';
import { jobScope } from '../../../../shared/async/job-scope.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { Activity, MembershipChange } from '../../../../tray-service/domain/activity.ts';
import { awaySpans, isAwayAt } from '../../../../tray-service/domain/membership-intervals.ts';
import { ReferenceTray, type TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { liveRecords } from '../../../support/reference-tray/reference-tray-reads.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import {
  aComment,
  aCommentReaction,
  aMention,
  aPost,
  aReaction,
  aReply,
} from '../../../support/activity-builder.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { conformanceCase } from './conformance-case.ts';
import type { CommunityMembersPort } from '../../../../tray-service/storage/port.ts';
import { compareCodePoints } from '../../../../tray-service/domain/code-point-order.ts';
import { differences, modelSnapshot, plain, sinceBefore, storageSnapshot } from './tray-snapshot.ts';

/**
 * Leaving and rejoining as a property (docs/tray-rules.md#leaving-and-rejoining-a-community): one
 * community's joins and leaves, its posts, comments, replies, reactions and mentions, and the same
 * kinds of action on user feeds, delivered in a random order (a join or leave after the actions it
 * precedes, posts in batches, redeliveries), with read marks in between. Afterwards every user's
 * v3 and v2 pages, counts and read state must be the reference tray's.
 */

/** Runs per adapter: every run is some 40 writes; FerretDB takes about a second a run. */
const RUNS = 30;

const USERS = ['ana', 'ben', 'cid', 'dee', 'eve'] as const;
const KINDS = ['post', 'post', 'comment', 'reply', 'reaction', 'commentReaction', 'mention'] as const;

interface ActionSpec {
  kind: (typeof KINDS)[number];
  actor: number;
  /** Which target: posts 0 and 1 are the community's, post 2 is on a user's feed. */
  target: number;
  /** Mentions: who is mentioned, and whether in a post of its own or a comment. */
  mentioned: number;
  inComment: boolean;
  minute: number;
  ms: number;
}

interface ChangeSpec {
  user: number;
  active: boolean;
  minute: number;
  ms: number;
}

type Extra =
  { kind: 'markRead'; user: number; which: number } | { kind: 'markAllRead' | 'lastRead'; user: number };

interface Scenario {
  /** Members from before every action, joined first. */
  members: number[];
  actions: ActionSpec[];
  changes: ChangeSpec[];
  extras: Extra[];
  /** A sort key per delivery: actions, changes and extras in one random order. */
  order: number[];
  /** Consecutive actions delivered in one operation. */
  batch: number[];
  redeliver: number[];
}

const user = fc.integer({ min: 0, max: USERS.length - 1 });
const minute = fc.integer({ min: 0, max: 6 });
const ms = fc.constantFrom(0, 0, 1, 30_000);

const scenario: fc.Arbitrary<Scenario> = fc.record({
  members: fc.subarray([0, 1, 2, 3, 4]),
  actions: fc.array(
    fc.record({
      kind: fc.constantFrom(...KINDS),
      actor: user,
      target: fc.integer({ min: 0, max: 2 }),
      mentioned: user,
      inComment: fc.boolean(),
      minute,
      ms,
    }),
    { minLength: 4, maxLength: 16 },
  ),
  changes: fc.array(fc.record({ user, active: fc.boolean(), minute, ms }), { minLength: 1, maxLength: 8 }),
  extras: fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('markRead' as const), user, which: fc.nat() }),
      fc.record({ kind: fc.constantFrom('markAllRead' as const, 'lastRead' as const), user }),
    ),
    { maxLength: 4 },
  ),
  order: fc.array(fc.nat(), { minLength: 28, maxLength: 28 }),
  batch: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 16, maxLength: 16 }),
  redeliver: fc.array(fc.nat(), { maxLength: 3 }),
});

function operationsOf(run: Scenario, tag: string, start: number) {
  const userIds = USERS.map((name) => `u-${name}_${tag}`);
  const id = (index: number) => userIds[index] as string;
  const communityId = `c-hike_${tag}`;
  const base = start - DAY_MS;
  const community = { communityId };
  const feed = { userFeed: id(2) };
  const posts = [
    { postId: `p0_${tag}`, owner: id(0), scope: community },
    { postId: `p1_${tag}`, owner: id(1), scope: community },
    { postId: `p2_${tag}`, owner: id(2), scope: feed },
  ];
  const comments = posts.map((post, index) => ({
    commentId: `cm${index}_${tag}`,
    owner: id(3 + (index % 2)),
    postId: post.postId,
  }));
  const activities = run.actions.map((spec, index): Activity => {
    const actor = id(spec.actor);
    const post = posts[spec.target] as (typeof posts)[number];
    const action = {
      id: `a${index}_${tag}`,
      at: base + spec.minute * 60_000 + spec.ms,
      // A rename between actions: each record names an actor as their counted action shows them.
      name: `${USERS[spec.actor]?.toUpperCase()}${index % 3 === 0 ? ' (new)' : ''}`,
    };
    const options = { ...action, ...post.scope };
    switch (spec.kind) {
      case 'post':
        return aPost(actor, { ...action, communityId });
      case 'comment':
        return aComment(actor, post, options);
      case 'reply':
        return aReply(actor, comments[spec.target] as (typeof comments)[number], options);
      case 'reaction':
        return aReaction(actor, post, options);
      case 'commentReaction':
        return aCommentReaction(actor, comments[spec.target] as (typeof comments)[number], options);
      case 'mention':
        return aMention(
          actor,
          id(spec.mentioned),
          spec.inComment
            ? { in: 'comment', commentId: options.id, postId: post.postId }
            : { in: 'post', postId: options.id },
          options,
        );
    }
  });
  const changes = run.changes.map((spec): MembershipChange => ({
    communityId,
    userId: id(spec.user),
    active: spec.active,
    at: base + spec.minute * 60_000 + spec.ms,
  }));
  type Delivery =
    { kind: 'action'; index: number } | { kind: 'change'; index: number } | { kind: 'extra'; index: number };
  const deliveries: Delivery[] = [
    ...activities.map((_, index) => ({ kind: 'action' as const, index })),
    ...changes.map((_, index) => ({ kind: 'change' as const, index })),
    ...run.extras.map((_, index) => ({ kind: 'extra' as const, index })),
  ];
  const keyed = deliveries.map((delivery, index) => ({ delivery, key: run.order[index] ?? index }));
  keyed.sort((a, b) => a.key - b.key);

  const operations: TrayOperation[] = [];
  let now = start;
  const tick = () => (now += 1_000);
  if (run.members.length > 0)
    operations.push({
      kind: 'membership',
      changes: run.members.map((member) => ({
        communityId,
        userId: id(member),
        active: true,
        at: base - 60_000,
      })),
      now: tick(),
    });
  const deliver = (list: Activity[]) => {
    const personal = list.filter((activity) => activity.audience.kind === 'user');
    const posted = list.filter((activity) => activity.audience.kind === 'community');
    if (personal.length > 0) operations.push({ kind: 'personal', activities: personal, now: tick() });
    if (posted.length > 0) operations.push({ kind: 'posts', communityId, posts: posted, now: tick() });
  };
  let pending: Activity[] = [];
  let batches = 0;
  const flush = () => {
    if (pending.length > 0) deliver(pending);
    pending = [];
  };
  for (const { delivery } of keyed) {
    if (delivery.kind === 'action') {
      pending.push(activities[delivery.index] as Activity);
      if (pending.length >= (run.batch[batches] ?? 1)) {
        batches += 1;
        flush();
      }
      continue;
    }
    flush();
    if (delivery.kind === 'change') {
      operations.push({
        kind: 'membership',
        changes: [changes[delivery.index] as MembershipChange],
        now: tick(),
      });
      continue;
    }
    const extra = run.extras[delivery.index] as Extra;
    if (extra.kind === 'markRead') {
      const activity = activities[extra.which % activities.length] as Activity;
      operations.push({
        kind: 'markRead',
        userId: activity.audience.kind === 'user' ? activity.audience.userId : id(extra.user),
        verb: activity.verb,
        targetId: activity.targetId,
        now: tick(),
      });
    } else operations.push({ kind: extra.kind, userId: id(extra.user), now: tick() });
  }
  flush();
  for (const index of run.redeliver) deliver([activities[index % activities.length] as Activity]);
  /** Actions on the community's targets addressed to a user away at their time (what the rule holds back). */
  const away = activities.filter((activity) => {
    if (activity.audience.kind !== 'user' || activity.communityId === undefined) return false;
    const recipient = activity.audience.userId;
    const edges = [
      ...run.members
        .filter((member) => id(member) === recipient)
        .map(() => ({ joined: true, at: base - 60_000 })),
      ...changes
        .filter((change) => change.userId === recipient)
        .map((change) => ({ joined: change.active, at: change.at })),
    ];
    return isAwayAt(awaySpans(edges), activity.at);
  }).length;
  return { operations, userIds, readAt: now, away, activities, communityId };
}

/**
 * The events console's reads (CommunityMembersPort) against the model: each community post's
 * recipients are the users it reached, and each action addressed to one user on the community's
 * target is away exactly when the model holds it back for that.
 */
async function expectRecipientsOfModel(
  members: CommunityMembersPort,
  model: ReferenceTray,
  run: { userIds: readonly string[]; activities: readonly Activity[]; communityId: string },
) {
  const posts = run.activities.filter((activity) => activity.audience.kind === 'community');
  for (const post of posts) {
    const reached = run.userIds.filter((userId) => model.reachedByPost(post, userId)).sort(compareCodePoints);
    const page = await members.postRecipients(run.communityId, post, { limit: 50 });
    expect(page.userIds, `recipients of ${post.lastActionId}`).to.deep.equal(reached);
    expect(await members.countPostRecipients(run.communityId, post)).to.equal(reached.length);
    expect(await members.reachedAmong(run.communityId, post, run.userIds)).to.deep.equal(new Set(reached));
  }
  const personal = run.activities.filter(
    (activity) => activity.audience.kind === 'user' && activity.audience.userId !== activity.actor.userId,
  );
  const away = personal.map(
    (activity) =>
      activity.audience.kind === 'user' && model.awayFromAction(activity, activity.audience.userId),
  );
  expect(await members.notReached(personal), 'away for the personal actions').to.deep.equal(away);
  return { posts: posts.length, away: away.filter(Boolean).length };
}

conformanceCase(
  'model: joins and leaves in any order with posts, comments, reactions and mentions leave every tray the reference tray',
  async ({ storage, id, write }) => {
    let runs = 0;
    const seen = { records: 0, away: 0, posts: 0, awayRead: 0 };
    const start = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    await fc.assert(
      fc.asyncProperty(scenario, async (run) => {
        const tag = id(`m${runs++}`);
        const { operations, userIds, readAt, away, activities, communityId } = operationsOf(run, tag, start);
        const since = sinceBefore((operations[Math.floor(operations.length / 2)] as TrayOperation).now);
        const model = new ReferenceTray({ retentionDays: RETENTION_DAYS });
        for (const operation of operations) {
          model.apply(operation);
          await applyOperation(storage, operation, write);
        }
        seen.away += away;
        for (const userId of userIds) {
          const expected = modelSnapshot(model, userId, readAt, since);
          seen.records += expected.count;
          const found = differences(await storageSnapshot(storage, userId, readAt, since), expected);
          if (found.length > 0) expect.fail(`${userId}'s tray at ${readAt}:\n${found.join('\n')}`);
        }
        const read = await expectRecipientsOfModel(storage.communityMembers, model, {
          userIds,
          activities,
          communityId,
        });
        seen.posts += read.posts;
        seen.awayRead += read.away;
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 240_000, markInterruptAsFailure: true },
    );
    expect(seen.records, 'records compared').to.be.above(RUNS * 3);
    expect(seen.away, 'actions addressed to a member while away').to.be.above(0);
    expect(seen.posts, 'posts whose recipients were read').to.be.above(RUNS);
    expect(seen.awayRead, 'personal actions read as away').to.be.above(0);
  },
  { timeout: 300_000, ownDatabase: true },
);

/** Writers applying one scenario's operations at once in the concurrent variant below. */
const LANES = 4;

conformanceCase(
  'model: the same scenarios written at once by two processes (after their leaves), some jobs run twice at once, end as the reference tray',
  async ({ storage, peer, id, write }) => {
    const processes = [storage, await peer()];
    let runs = 0;
    let compared = 0;
    const start = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    await fc.assert(
      fc.asyncProperty(scenario, fc.array(fc.nat(), { maxLength: 4 }), async (drawn, twice) => {
        // Read marks race writes by nature (a mark applies to the record as it then is): left out.
        const run = { ...drawn, extras: [] };
        const tag = id(`w${runs++}`);
        const { operations: drawnOrder, userIds, readAt } = operationsOf(run, tag, start);
        // A leave written at once with an action it covers may go either way (the action counts
        // when it was processed first): the leaves are written first, one by one, then the rest at
        // once, in which joins, posts and comments still race.
        const isLeave = (operation: TrayOperation) =>
          operation.kind === 'membership' && operation.changes.some((change) => !change.active);
        const leaves = drawnOrder.filter(isLeave);
        const operations = drawnOrder.filter((operation) => !isLeave(operation));
        for (const operation of leaves) await applyOperation(storage, operation, write);
        const model = new ReferenceTray({ retentionDays: RETENTION_DAYS });
        for (const operation of [...leaves, ...operations]) model.apply(operation);
        const again = new Set(twice.map((n) => n % operations.length));
        // Each operation is a job of its own (its scope); one run twice is the same job taken up
        // by both processes at once, as after a queue failover.
        const job = (index: number, on: number) => {
          const operation = operations[index] as TrayOperation;
          return jobScope.run(`${tag}:job${index}`, () =>
            applyOperation(processes[on % 2] as (typeof processes)[number], operation, write),
          );
        };
        let next = 0;
        const lane = async (on: number) => {
          while (next < operations.length) {
            const index = next++;
            await Promise.all([job(index, on), ...(again.has(index) ? [job(index, on + 1)] : [])]);
          }
        };
        await Promise.all(Array.from({ length: LANES }, (_, on) => lane(on)));
        for (const userId of userIds) {
          const expected = contentOf(liveRecords(model, userId, readAt));
          compared += expected.length;
          const stored = contentOf(
            (await storage.records.pageAfter(userId, undefined, 1_000, readAt)).records,
          );
          const found = differences(stored, expected);
          if (found.length > 0) expect.fail(`${userId}'s tray at ${readAt}:\n${found.join('\n')}`);
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 240_000, markInterruptAsFailure: true },
    );
    expect(compared, 'records compared').to.be.above(RUNS * 3);
  },
  { timeout: 300_000, ownDatabase: true },
);

/** A tray's records as the writes decide them: the write times and read flags depend on the interleaving. */
function contentOf(records: readonly TrayRecord[]) {
  return plain(
    [...records]
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map(({ unreadAt: _unreadAt, changedAt: _changedAt, hasRead: _hasRead, ...content }) => content),
  );
}
