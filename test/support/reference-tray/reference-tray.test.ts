import { expect } from 'chai';
import fc from 'fast-check';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { Activity } from '../../../tray-service/domain/activity.ts';
import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import { referenceTray, type TrayOperation } from './reference-tray.ts';
import {
  liveRecords,
  referenceChangedSince,
  referenceCountUnread,
  referenceHistory,
  referencePageAfter,
  referencePageNumber,
} from './reference-tray-reads.ts';
import { aComment, aCommentReaction, aMention, aPost, aReaction, aReply } from '../activity-builder.ts';
import { join, leave, NOW, personal, POST, posts, RETENTION, T } from './model-operations.ts';

const comment = (actor: string, minute: number) =>
  aComment(actor, POST, { id: `cm-${actor}-${minute}`, at: T + minute * 60_000, name: actor.toUpperCase() });

/**
 * Records without changedAt: each write that changes a record stamps one a millisecond past its
 * last where the clock does not move (nextChangedAt), so deliveries at one clock in another order,
 * changing the record another number of times, end with the same record at another changedAt.
 */
const unstamped = (records: readonly TrayRecord[]) =>
  records.map(({ changedAt: _changedAt, ...rest }) => rest);

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('referenceTray', () => {
  describe('grouping', () => {
    it('groups comments on one post into one record: 3 newest distinct actors, each counted once', () => {
      const tray = referenceTray(
        [
          personal([
            comment('u-ben', 1),
            comment('u-cid', 2),
            comment('u-dee', 3),
            comment('u-eve', 4),
            comment('u-ben', 5),
          ]),
        ],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW);
      expect(record?.key).to.equal('comment_p-1_u-ana');
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-ben', 'u-eve', 'u-dee']);
      expect(record?.actorsCount).to.equal(4);
      expect(record?.lastActionId).to.equal('cm-u-ben-5');
      expect(record?.lastUpdate).to.equal(T + 5 * 60_000);
      expect(record?.unreadAt).to.equal(NOW);
    });

    it('never notifies a recipient of their own action, nor counts it', () => {
      const tray = referenceTray(
        [personal([comment('u-ana', 1), comment('u-ben', 2), comment('u-ana', 3)])],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW);
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-ben']);
      expect(record?.actorsCount).to.equal(1);
      expect(
        referenceTray([personal([comment('u-ana', 1)])], RETENTION).storedRecords('u-ana'),
      ).to.deep.equal([]);
    });

    it('gives the same records whatever order the deliveries arrive in, redeliveries included', () => {
      const deliveries = [comment('u-ben', 1), comment('u-cid', 1), comment('u-ben', 3), comment('u-dee', 2)];
      const expected = unstamped(liveRecords(referenceTray([personal(deliveries)], RETENTION), 'u-ana', NOW));
      for (const order of permutations([...deliveries, deliveries[0] as Activity]))
        expect(
          unstamped(
            liveRecords(
              referenceTray(
                order.map((one) => personal([one])),
                RETENTION,
              ),
              'u-ana',
              NOW,
            ),
          ),
        ).to.deep.equal(expected);
    });

    it('keeps a read record read when a delivery changes nothing, and makes it unread on new activity', () => {
      const read: TrayOperation = {
        kind: 'markRead',
        userId: 'u-ana',
        verb: 'comment',
        targetId: 'p-1',
        now: NOW + 1,
      };
      const again = referenceTray(
        [personal([comment('u-ben', 1)]), read, personal([comment('u-ben', 1)], NOW + 2)],
        RETENTION,
      );
      expect(liveRecords(again, 'u-ana', NOW + 2)[0]).to.include({
        hasRead: true,
        unreadAt: NOW,
        changedAt: NOW + 1,
      });
      const fresh = referenceTray(
        [personal([comment('u-ben', 1)]), read, personal([comment('u-cid', 2)], NOW + 2)],
        RETENTION,
      );
      expect(liveRecords(fresh, 'u-ana', NOW + 2)[0]).to.include({ hasRead: false, unreadAt: NOW + 2 });
    });

    it('adds an older action delivered late without moving the latest fields back', () => {
      const tray = referenceTray(
        [personal([comment('u-ben', 5)]), personal([comment('u-cid', 1)], NOW + 1)],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW + 1);
      expect(record).to.include({ lastActionId: 'cm-u-ben-5', lastUpdate: T + 5 * 60_000, actorsCount: 2 });
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-ben', 'u-cid']);
    });

    it('breaks a tie of equal times by action id', () => {
      const tray = referenceTray(
        [
          personal([
            aReaction('u-ben', POST, { id: 'r-a', at: T }),
            aReaction('u-cid', POST, { id: 'r-b', at: T }),
          ]),
        ],
        RETENTION,
      );
      expect(liveRecords(tray, 'u-ana', NOW)[0]).to.include({ lastActionId: 'r-b' });
    });

    it('never groups mentions: one record per mentioning post or comment', () => {
      const tray = referenceTray(
        [
          personal([
            aMention('u-ben', 'u-ana', { in: 'post', postId: 'p-7' }, { at: T }),
            aMention('u-ben', 'u-ana', { in: 'comment', commentId: 'cm-8', postId: 'p-7' }, { at: T + 1 }),
          ]),
        ],
        RETENTION,
      );
      expect(liveRecords(tray, 'u-ana', NOW).map((record) => record.key)).to.deep.equal([
        'mention_cm-8_u-ana',
        'mention_p-7_u-ana',
      ]);
    });
  });

  describe('membership by time', () => {
    const post = (author: string, minute: number) =>
      aPost(author, { id: `p-${author}-${minute}`, at: T + minute * 60_000 });

    it('fans a post out to the members at its createdAt, the author excluded', () => {
      const tray = referenceTray(
        [join('u-ana', T), join('u-ben', T), join('u-cid', T + 10 * 60_000), posts([post('u-ben', 5)])],
        RETENTION,
      );
      expect(liveRecords(tray, 'u-ana', NOW).map((record) => record.key)).to.deep.equal([
        'post_c-hike_u-ana',
      ]);
      expect(liveRecords(tray, 'u-ben', NOW)).to.deep.equal([]);
      expect(liveRecords(tray, 'u-cid', NOW)).to.deep.equal([]);
    });

    it('gives a join processed after the posts it precedes those posts: either order ends the same', () => {
      const operations = [join('u-ana', T), posts([post('u-ben', 5)]), posts([post('u-cid', 6)])];
      const expected = unstamped(liveRecords(referenceTray(operations, RETENTION), 'u-ana', NOW));
      expect(expected[0]).to.include({ actorsCount: 2 });
      for (const order of permutations(operations))
        expect(unstamped(liveRecords(referenceTray(order, RETENTION), 'u-ana', NOW))).to.deep.equal(expected);
    });

    it('takes back nothing a leave processed late covers; a leave processed first stops the posts after it', () => {
      const made = referenceTray([join('u-ana', T), posts([post('u-ben', 5)])], RETENTION);
      const late = referenceTray(
        [join('u-ana', T), posts([post('u-ben', 5)]), leave('u-ana', T + 60_000, NOW + 1)],
        RETENTION,
      );
      expect(liveRecords(made, 'u-ana', NOW)).to.have.length(1);
      expect(late.storedRecords('u-ana')).to.deep.equal(made.storedRecords('u-ana'));
      const before = referenceTray(
        [join('u-ana', T), leave('u-ana', T + 60_000), posts([post('u-ben', 5)])],
        RETENTION,
      );
      expect(liveRecords(before, 'u-ana', NOW)).to.deep.equal([]);
    });

    it('keeps what a late leave covers through later recomputations, and stops what is processed after it', () => {
      const tray = referenceTray(
        [
          join('u-ana', T),
          posts([post('u-ben', 1), post('u-cid', 5)]),
          { kind: 'markRead', userId: 'u-ana', verb: 'post', targetId: 'c-hike', now: NOW + 1 },
          leave('u-ana', T + 3 * 60_000, NOW + 2),
          // Processed after the leave and dated in the time away: counts for nothing.
          posts([post('u-dee', 4)], NOW + 3),
          // A removal shrinks the group: the record is computed again, Cid's post still counts.
          {
            kind: 'removal',
            removals: [{ kind: 'post', id: 'p-u-ben-1', postId: 'p-u-ben-1', at: T + 6 * 60_000 }],
            now: NOW + 4,
          },
        ],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW + 4);
      expect(record).to.include({ lastActionId: 'p-u-cid-5', actorsCount: 1, hasRead: true, unreadAt: NOW });
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-cid']);
    });

    it('names and counts, after a rejoin, only those who posted while the member was there', () => {
      // Five members; three post; Ana leaves; Eve posts while she is away; Ana rejoins; Fay posts.
      const operations = [
        join('u-ana', T),
        join('u-ben', T),
        join('u-cid', T),
        join('u-dee', T),
        join('u-eve', T),
        posts([post('u-ben', 1)]),
        posts([post('u-cid', 2)]),
        posts([post('u-dee', 3)]),
        leave('u-ana', T + 4 * 60_000),
        posts([post('u-eve', 5)]),
        join('u-ana', T + 6 * 60_000),
        posts([post('u-fay', 7)]),
      ];
      const [record] = liveRecords(referenceTray(operations, RETENTION), 'u-ana', NOW);
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-fay', 'u-dee', 'u-cid']);
      expect(record).to.include({ actorsCount: 4, lastActionId: 'p-u-fay-7' });
      // The same record whatever order the joins, leaves and posts arrive in.
      const seen = (tray: ReturnType<typeof referenceTray>) =>
        liveRecords(tray, 'u-ana', NOW).map(({ unreadAt: _u, changedAt: _c, ...rest }) => rest);
      // Orders in which the leave is processed before Eve's post, which it covers.
      const reversed = [...operations].reverse();
      const leaveFirst = [operations[8]!, ...reversed.filter((operation) => operation !== operations[8])];
      for (const order of [leaveFirst, [...operations.slice(5), ...operations.slice(0, 5)]])
        expect(seen(referenceTray(order, RETENTION))).to.deep.equal(
          seen(referenceTray(operations, RETENTION)),
        );
    });

    it('adds nothing created while away when the leave is processed before the late join', () => {
      const tray = referenceTray(
        [
          posts([post('u-ben', 1), post('u-cid', 3), post('u-dee', 5)]),
          leave('u-ana', T + 2 * 60_000),
          join('u-ana', T + 4 * 60_000),
          join('u-ana', T),
        ],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW);
      expect(record?.lastActionId).to.equal('p-u-dee-5');
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-dee', 'u-ben']);
      expect(record?.actorsCount).to.equal(2);
      // The late join processed before the leave: it adds the three posts, and the leave processed
      // after it takes none back.
      const joinFirst = referenceTray(
        [
          posts([post('u-ben', 1), post('u-cid', 3), post('u-dee', 5)]),
          join('u-ana', T),
          leave('u-ana', T + 2 * 60_000),
          join('u-ana', T + 4 * 60_000),
        ],
        RETENTION,
      );
      expect(liveRecords(joinFirst, 'u-ana', NOW)[0]?.actorsCount).to.equal(3);
      const onlyFirst = referenceTray(
        [posts([post('u-ben', 1), post('u-cid', 3)]), leave('u-ana', T + 2 * 60_000), join('u-ana', T)],
        RETENTION,
      );
      expect(liveRecords(onlyFirst, 'u-ana', NOW)[0]).to.include({
        lastActionId: 'p-u-ben-1',
        actorsCount: 1,
      });
    });

    it("names each actor at their latest action of the member's time, not a later one while away", () => {
      const renamed = (minute: number, name: string) =>
        aPost('u-ben', { id: `p-ben-${minute}`, at: T + minute * 60_000, name });
      const tray = referenceTray(
        [
          join('u-ana', T),
          leave('u-ana', T + 2 * 60_000),
          posts([renamed(1, 'Ben'), renamed(3, 'Benjamin'), post('u-cid', 1)]),
        ],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW);
      expect(record?.actors).to.deep.equal([
        { userId: 'u-cid', name: 'u-cid', at: T + 60_000 },
        { userId: 'u-ben', name: 'Ben', at: T + 60_000 },
      ]);
    });
  });

  describe("leaving a community stops every record of the community's targets", () => {
    const ANA_POST = { postId: 'p-1', owner: 'u-ana' };
    const ANA_COMMENT = { commentId: 'cm-a', owner: 'u-ana', postId: 'p-1' };
    const minute = (n: number) => T + n * 60_000;
    /** One of each kind of record for Ana on the community's targets, by `actor` at `n`. */
    const everyKind = (actor: string, n: number) => [
      aComment(actor, ANA_POST, { id: `cm-${actor}-${n}`, at: minute(n) }),
      aReaction(actor, ANA_POST, { id: `r-${actor}-${n}`, at: minute(n) }),
      aReply(actor, ANA_COMMENT, { id: `re-${actor}-${n}`, at: minute(n) }),
      aCommentReaction(actor, ANA_COMMENT, { id: `rc-${actor}-${n}`, at: minute(n) }),
      aMention(actor, 'u-ana', { in: 'post', postId: `pm-${actor}-${n}` }, { at: minute(n) }),
      aMention(
        actor,
        'u-ana',
        { in: 'comment', commentId: `cmm-${actor}-${n}`, postId: 'p-1' },
        { at: minute(n) },
      ),
    ];
    const summary = (tray: ReturnType<typeof referenceTray>) =>
      liveRecords(tray, 'u-ana', NOW + 5)
        .map(
          (record) =>
            `${record.key} ${record.actors.map((actor) => actor.userId).join(',')} ${record.actorsCount}`,
        )
        .sort();

    it('counts, after a rejoin, only the actions of the time as a member, for every record kind', () => {
      const operations = [
        join('u-ana', T),
        personal(everyKind('u-ben', 1)),
        leave('u-ana', minute(2)),
        personal(everyKind('u-cid', 3)),
        join('u-ana', minute(4)),
        personal(everyKind('u-dee', 5)),
      ];
      expect(summary(referenceTray(operations, RETENTION))).to.deep.equal([
        'comment_p-1_u-ana u-dee,u-ben 2',
        'mention_cmm-u-ben-1_u-ana u-ben 1',
        'mention_cmm-u-dee-5_u-ana u-dee 1',
        'mention_pm-u-ben-1_u-ana u-ben 1',
        'mention_pm-u-dee-5_u-ana u-dee 1',
        'mentreact_cm-a_u-ana u-dee,u-ben 2',
        'mentreply_cm-a_u-ana u-dee,u-ben 2',
        'reaction_p-1_u-ana u-dee,u-ben 2',
      ]);
      // The leave and the rejoin delivered last: Cid's actions, processed before the leave, stay.
      const late = [
        operations[0]!,
        operations[1]!,
        operations[3]!,
        operations[5]!,
        operations[2]!,
        operations[4]!,
      ];
      expect(summary(referenceTray(late, RETENTION))).to.deep.equal([
        'comment_p-1_u-ana u-dee,u-cid,u-ben 3',
        'mention_cmm-u-ben-1_u-ana u-ben 1',
        'mention_cmm-u-cid-3_u-ana u-cid 1',
        'mention_cmm-u-dee-5_u-ana u-dee 1',
        'mention_pm-u-ben-1_u-ana u-ben 1',
        'mention_pm-u-cid-3_u-ana u-cid 1',
        'mention_pm-u-dee-5_u-ana u-dee 1',
        'mentreact_cm-a_u-ana u-dee,u-cid,u-ben 3',
        'mentreply_cm-a_u-ana u-dee,u-cid,u-ben 3',
        'reaction_p-1_u-ana u-dee,u-cid,u-ben 3',
      ]);
    });

    it('leaves records of user-feed targets as they are', () => {
      const feed = { userFeed: 'u-ana' };
      const tray = referenceTray(
        [
          join('u-ana', T),
          leave('u-ana', minute(2)),
          personal([
            aComment('u-cid', ANA_POST, { id: 'cm-feed', at: minute(3), ...feed }),
            aMention('u-cid', 'u-ana', { in: 'post', postId: 'pm-feed' }, { at: minute(3), ...feed }),
          ]),
        ],
        RETENTION,
      );
      expect(summary(tray)).to.deep.equal(['comment_p-1_u-ana u-cid 1', 'mention_pm-feed_u-ana u-cid 1']);
    });

    it('holds nothing back from a recipient the tray has no join or leave of in the community', () => {
      const tray = referenceTray([personal(everyKind('u-ben', 1))], RETENTION);
      expect(summary(tray)).to.have.length(6);
    });
  });

  describe('processing order (properties)', () => {
    const change = fc.record({
      kind: fc.constantFrom('join' as const, 'leave' as const),
      minute: fc.integer({ min: 0, max: 8 }),
    });
    const act = fc.record({
      kind: fc.constantFrom('post' as const, 'comment' as const, 'mention' as const),
      actor: fc.constantFrom('u-ben', 'u-cid', 'u-dee'),
      minute: fc.integer({ min: 0, max: 8 }),
    });
    type Step = { operation: TrayOperation; leaveAt?: number; actionAt?: number };
    const changeStep = ({ kind, minute }: { kind: 'join' | 'leave'; minute: number }): Step =>
      kind === 'join'
        ? { operation: join('u-ana', T + minute * 60_000) }
        : { operation: leave('u-ana', T + minute * 60_000), leaveAt: T + minute * 60_000 };
    const actStep = (
      { kind, actor, minute }: { kind: 'post' | 'comment' | 'mention'; actor: string; minute: number },
      index: number,
    ): Step => {
      const options = { id: `a-${index}`, at: T + minute * 60_000 };
      const operation =
        kind === 'post'
          ? posts([aPost(actor, options)])
          : kind === 'comment'
            ? personal([aComment(actor, POST, options)])
            : personal([aMention(actor, 'u-ana', { in: 'post', postId: options.id }, options)]);
      return { operation, actionAt: options.at };
    };
    const content = (tray: ReturnType<typeof referenceTray>) =>
      liveRecords(tray, 'u-ana', NOW).map(
        ({ unreadAt: _unreadAt, changedAt: _changedAt, hasRead: _hasRead, ...rest }) => rest,
      );
    const shuffle = <T>(items: readonly T[], seeds: Iterator<number>) =>
      items
        .map((item) => ({ item, order: seeds.next().value as number }))
        .sort((a, b) => a.order - b.order)
        .map(({ item }) => item);
    /** Moves each leave before the first action at or after its time: no leave is processed late. */
    function leavesOnTime(steps: readonly Step[]): Step[] {
      const ordered = [...steps];
      for (const step of steps) {
        if (step.leaveAt === undefined) continue;
        const leaveAt = step.leaveAt;
        const from = ordered.indexOf(step);
        const covered = ordered.findIndex(
          (other) => other.actionAt !== undefined && other.actionAt >= leaveAt,
        );
        if (covered !== -1 && covered < from) {
          ordered.splice(from, 1);
          ordered.splice(covered, 0, step);
        }
      }
      return ordered;
    }

    it('gives the same records for any interleaving in which no leave is processed after an action it covers', () => {
      fc.assert(
        fc.property(
          fc.array(change, { maxLength: 5 }),
          fc.array(act, { minLength: 1, maxLength: 8 }),
          fc.infiniteStream(fc.nat()),
          (changes, acts, seeds) => {
            const steps = [...changes.map(changeStep), ...acts.map(actStep)];
            const shuffled = leavesOnTime(shuffle(steps, seeds));
            expect(
              content(
                referenceTray(
                  shuffled.map((step) => step.operation),
                  RETENTION,
                ),
              ),
            ).to.deep.equal(
              content(
                referenceTray(
                  steps.map((step) => step.operation),
                  RETENTION,
                ),
              ),
            );
          },
        ),
        { numRuns: 500 },
      );
    });

    it('changes no record when a leave is processed, whatever came before it', () => {
      fc.assert(
        fc.property(
          fc.array(change, { maxLength: 5 }),
          fc.array(act, { minLength: 1, maxLength: 8 }),
          fc.infiniteStream(fc.nat()),
          fc.integer({ min: 0, max: 8 }),
          (changes, acts, seeds, minute) => {
            const operations = shuffle([...changes.map(changeStep), ...acts.map(actStep)], seeds).map(
              (step) => step.operation,
            );
            const before = referenceTray(operations, RETENTION);
            const after = referenceTray(
              [...operations, leave('u-ana', T + minute * 60_000, NOW + 1)],
              RETENTION,
            );
            expect(after.storedRecords('u-ana')).to.deep.equal(before.storedRecords('u-ana'));
          },
        ),
        { numRuns: 300 },
      );
    });

    it('counts nothing processed after a leave and dated in the time away it opens', () => {
      fc.assert(
        fc.property(
          fc.array(change, { maxLength: 5 }),
          fc.array(act, { maxLength: 6 }),
          fc.array(act, { minLength: 1, maxLength: 6 }),
          fc.infiniteStream(fc.nat()),
          fc.integer({ min: 0, max: 8 }),
          (changes, earlier, later, seeds, minute) => {
            const leaveAt = T + minute * 60_000;
            const first = shuffle([...changes.map(changeStep), ...earlier.map(actStep)], seeds).map(
              (step) => step.operation,
            );
            // Later actions, numbered after the earlier ones; those at or after the leave are covered
            // unless a join after the leave (already processed) is at or before them.
            const next = later.map((one, index) => actStep(one, earlier.length + index));
            const rejoins = changes
              .filter((one) => one.kind === 'join')
              .map((one) => T + one.minute * 60_000);
            const covered = (at: number) =>
              at >= leaveAt && !rejoins.some((joinAt) => joinAt > leaveAt && joinAt <= at);
            const withAll = [...first, leave('u-ana', leaveAt), ...next.map((step) => step.operation)];
            const uncovered = [
              ...first,
              leave('u-ana', leaveAt),
              ...next.filter((step) => !covered(step.actionAt ?? 0)).map((step) => step.operation),
            ];
            expect(content(referenceTray(withAll, RETENTION))).to.deep.equal(
              content(referenceTray(uncovered, RETENTION)),
            );
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  describe('a deleted user', () => {
    it('shows as `Deleted user` without image, marked deleted, loses their own tray and stops receiving posts', () => {
      const tray = referenceTray(
        [
          join('u-ben', T),
          personal([
            aComment('u-ben', POST, { id: 'cm-1', at: T + 1, name: 'Ben', imageUrl: 'https://img/ben' }),
          ]),
          personal([aComment('u-ana', { postId: 'p-2', owner: 'u-ben' }, { id: 'cm-2', at: T + 2 })]),
          { kind: 'deleteProfile', userId: 'u-ben', at: T + 3, now: NOW + 1 },
          posts([aPost('u-cid', { id: 'p-9', at: T + 4 })], NOW + 2),
        ],
        RETENTION,
      );
      const [record] = liveRecords(tray, 'u-ana', NOW + 2);
      expect(record?.actors).to.deep.equal([
        { userId: 'u-ben', name: 'Deleted user', deleted: true, at: T + 1 },
      ]);
      expect(record).to.include({ changedAt: NOW + 1, unreadAt: NOW, hasRead: false });
      expect(liveRecords(tray, 'u-ben', NOW + 2)).to.deep.equal([]);
    });

    it('receives nothing delivered after the deletion: personal actions, posts dated before it, a late join', () => {
      const tray = referenceTray(
        [
          join('u-ben', T),
          { kind: 'deleteProfile', userId: 'u-ben', at: T + 10, now: NOW + 1 },
          // Created before the deletion, delivered after it.
          personal(
            [aComment('u-ana', { postId: 'p-2', owner: 'u-ben' }, { id: 'cm-2', at: T + 2 })],
            NOW + 2,
          ),
          personal(
            [aMention('u-ana', 'u-ben', { in: 'post', postId: 'p-3' }, { at: T + 3, userFeed: 'u-ana' })],
            NOW + 2,
          ),
          posts([aPost('u-cid', { id: 'p-4', at: T + 4 })], NOW + 2),
          // A join after the deletion backfills nothing, and later posts reach nothing either.
          join('u-ben', T + 20, NOW + 3),
          posts([aPost('u-cid', { id: 'p-5', at: T + 30 })], NOW + 4),
        ],
        RETENTION,
      );
      expect(tray.storedRecords('u-ben')).to.deep.equal([]);
      expect(liveRecords(tray, 'u-ana', NOW + 4).map((record) => record.lastActionId)).to.deep.equal([]);
    });

    it('shows as `Deleted user` without image in their activities delivered after the deletion, also once computed again', () => {
      const ben = { name: 'Ben', imageUrl: 'https://img/ben' };
      const tray = referenceTray(
        [
          join('u-ana', T),
          join('u-cid', T),
          { kind: 'deleteProfile', userId: 'u-ben', at: T + 10, now: NOW + 1 },
          personal([aComment('u-ben', POST, { id: 'cm-1', at: T + 1, ...ben })], NOW + 2),
          posts([aPost('u-ben', { id: 'p-9', at: T + 2, ...ben })], NOW + 2),
          // A late join gets the kept post, and a late leave computes the records again: neither
          // brings the name back.
          join('u-dee', T + 1, NOW + 3),
          leave('u-cid', T + 5, NOW + 3),
        ],
        RETENTION,
      );
      const deleted = (at: number) => [{ userId: 'u-ben', name: 'Deleted user', deleted: true, at }];
      const actorsOf = (userId: string) =>
        liveRecords(tray, userId, NOW + 3).map((record) => [record.verb, record.actors]);
      expect(actorsOf('u-ana')).to.deep.equal([
        ['post', deleted(T + 2)],
        ['comment', deleted(T + 1)],
      ]);
      expect(actorsOf('u-cid')).to.deep.equal([['post', deleted(T + 2)]]);
      expect(actorsOf('u-dee')).to.deep.equal([['post', deleted(T + 2)]]);
    });
  });

  describe('reading', () => {
    const tray = referenceTray(
      [
        personal([
          comment('u-ben', 1),
          aReaction('u-ben', POST, { id: 'r-1', at: T + 60_000 }),
          aMention('u-cid', 'u-ana', { in: 'post', postId: 'p-3' }, { at: T + 60_000 }),
          aReaction('u-cid', { postId: 'p-4', owner: 'u-ana' }, { id: 'r-2', at: T + 2 * 60_000 }),
          aReaction('u-cid', { postId: 'p-5', owner: 'u-ana' }, { id: 'r-3', at: T }),
        ]),
      ],
      RETENTION,
    );

    it('pages v3 newest first without splitting records of equal lastUpdate', () => {
      const first = referencePageAfter(tray, 'u-ana', undefined, 2, NOW);
      expect(first.records.map((record) => record.key)).to.deep.equal([
        'reaction_p-4_u-ana',
        'reaction_p-1_u-ana',
        'mention_p-3_u-ana',
        'comment_p-1_u-ana',
      ]);
      expect(first.nextPage).to.equal(T + 60_000);
      expect(referencePageAfter(tray, 'u-ana', first.nextPage, 2, NOW)).to.deep.include({ nextPage: 0 });
      expect(referenceHistory(tray, 'u-ana', 2, NOW).flat()).to.have.length(5);
      expect(referencePageAfter(tray, 'u-ana', 0, 2, NOW).records).to.deep.equal([]);
    });

    it('pages v2 by number in the same order, without mentions', () => {
      const keys = [1, 2, 3].map((page) =>
        referencePageNumber(tray, 'u-ana', page, 2, NOW, ['mention']).map((record) => record.key),
      );
      expect(keys).to.deep.equal([
        ['reaction_p-4_u-ana', 'reaction_p-1_u-ana'],
        ['comment_p-1_u-ana', 'reaction_p-5_u-ana'],
        [],
      ]);
    });

    it('forgets records once lastUpdate + retention has passed', () => {
      expect(liveRecords(tray, 'u-ana', T + 90 * DAY_MS)).to.have.length(4);
      expect(liveRecords(tray, 'u-ana', T + 90 * DAY_MS + 60_000).map((record) => record.key)).to.deep.equal([
        'reaction_p-4_u-ana',
      ]);
    });

    it('starts a record past its retention afresh on new activity, its changedAt still after the old one', () => {
      const later = T + 90 * DAY_MS + 120_000;
      const model = referenceTray(
        [
          personal([comment('u-ben', 0), comment('u-cid', 1)]),
          personal([comment('u-dee', 2 + 90 * 24 * 60)], later),
        ],
        RETENTION,
      );
      const [record] = liveRecords(model, 'u-ana', later);
      expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-dee']);
      expect(record).to.include({ actorsCount: 1, lastUpdate: later, hasRead: false });
      expect(record?.changedAt).to.be.above(NOW);
    });

    it('counts unread records changed after the last-read time, read marks and delete-all scoped to their user', () => {
      const later = referenceTray(
        [
          personal([
            comment('u-ben', 1),
            aComment('u-cid', { postId: 'p-8', owner: 'u-dee' }, { id: 'cm-9', at: T }),
          ]),
          { kind: 'lastRead', userId: 'u-ana', now: NOW },
          personal([aReaction('u-ben', POST, { id: 'r-1', at: T })], NOW + 5),
          { kind: 'markAllRead', userId: 'u-dee', now: NOW + 6 },
        ],
        RETENTION,
      );
      expect(later.lastRead('u-ana')).to.equal(NOW);
      expect(referenceCountUnread(later, 'u-ana', later.lastRead('u-ana'), NOW + 6)).to.equal(1);
      expect(referenceCountUnread(later, 'u-dee', 0, NOW + 6)).to.equal(0);
      expect(referenceChangedSince(later, 'u-ana', NOW, NOW + 6).map((record) => record.key)).to.deep.equal([
        'reaction_p-1_u-ana',
      ]);
      later.apply({ kind: 'deleteAll', userId: 'u-ana', now: NOW + 7 });
      expect(liveRecords(later, 'u-ana', NOW + 7)).to.deep.equal([]);
      expect(later.clearedAt('u-ana')).to.equal(NOW + 7);
      expect(liveRecords(later, 'u-dee', NOW + 7)).to.have.length(1);
    });
  });

  it('is order-independent for any mix of personal deliveries and redeliveries (property)', () => {
    const action = fc.record({
      actor: fc.constantFrom('u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve'),
      minute: fc.integer({ min: 0, max: 5 }),
      verb: fc.constantFrom('comment', 'reaction'),
    });
    fc.assert(
      fc.property(
        fc.array(action, { minLength: 1, maxLength: 12 }),
        fc.infiniteStream(fc.nat()),
        (actions, seeds) => {
          const activities = actions.map(({ actor, minute, verb }) =>
            verb === 'comment'
              ? comment(actor, minute)
              : aReaction(actor, POST, { id: `r-${actor}-${minute}`, at: T + minute * 60_000 }),
          );
          const shuffled = [...activities, ...activities.slice(0, 3)]
            .map((activity) => ({ activity, order: seeds.next().value as number }))
            .sort((a, b) => a.order - b.order)
            .map(({ activity }) => personal([activity]));
          expect(unstamped(liveRecords(referenceTray(shuffled, RETENTION), 'u-ana', NOW))).to.deep.equal(
            unstamped(liveRecords(referenceTray([personal(activities)], RETENTION), 'u-ana', NOW)),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
