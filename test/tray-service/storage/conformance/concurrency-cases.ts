import { expect } from 'chai';
import { referenceTray, type TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { liveRecords } from '../../../support/reference-tray/reference-tray-reads.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';

/**
 * Concurrent writers: 8 writes at once on one record (and on one community's records) end exactly
 * as the same writes one after another, and a community's joins, leaves, posts and comments at once
 * end as the reference tray. Only unreadAt/changedAt may come from a different write.
 */

const WRITERS = 8;

/** What must not depend on the interleaving: everything but the ids of the two runs and the write times. */
function comparable(records: readonly TrayRecord[], tags: readonly string[]) {
  const untagged = (text: string) => tags.reduce((result, tag) => result.replaceAll(tag, ''), text);
  return records.map((record) => ({
    ...record,
    key: '',
    targetId: untagged(record.targetId),
    lastActionId: untagged(record.lastActionId),
    feed: { ...record.feed, id: untagged(record.feed.id) },
    userId: '',
    unreadAt: 0,
    changedAt: 0,
  }));
}

async function tray({ storage }: ConformanceContext, userId: string) {
  return (await storage.records.pageAfter(userId, undefined, 20, NOW)).records;
}

conformanceCase(
  'concurrency: 8 concurrent writers on one record end equal to the serial result',
  async (context) => {
    const { storage, id, write } = context;
    const comments = (owner: string) =>
      Array.from({ length: WRITERS }, (_, n) =>
        aComment(
          id(`u-${n}`),
          { postId: id(`p-${owner}`), owner },
          { id: id(`cm-${n}`), at: at(n % 3, n), segment: n },
        ),
      );
    const serial = id('u-serial');
    for (const activity of comments(serial)) await storage.writes.applyPersonal([activity], write(NOW));
    const parallel = id('u-parallel');
    await Promise.all(
      comments(parallel).map((activity) => storage.writes.applyPersonal([activity], write(NOW))),
    );
    const expected = await tray(context, serial);
    expect(expected[0]).to.include({ actorsCount: WRITERS });
    expect(comparable(await tray(context, parallel), [parallel])).to.deep.equal(
      comparable(expected, [serial]),
    );
  },
);

conformanceCase(
  'concurrency: concurrent read marks and writes on one record lose neither',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const post = { postId: id('p-1'), owner: ana };
    await storage.writes.applyPersonal(
      [aComment(id('u-x'), post, { id: id('cm-x'), at: at(0) })],
      write(NOW),
    );
    await Promise.all([
      ...Array.from({ length: WRITERS / 2 }, (_, n) =>
        storage.writes.applyPersonal(
          [aComment(id(`u-${n}`), post, { id: id(`cm-${n}`), at: at(1, n) })],
          write(NOW + 1),
        ),
      ),
      ...Array.from({ length: WRITERS / 2 }, () =>
        storage.records.markRead(ana, 'comment', post.postId, NOW + 1),
      ),
    ]);
    const [record] = await tray(context, ana);
    expect(record?.actorsCount).to.equal(WRITERS / 2 + 1);
    expect(record?.lastActionId).to.equal(id(`cm-${WRITERS / 2 - 1}`));
  },
);

conformanceCase(
  'concurrency: 8 concurrent posts to one community end equal to the serial result for every member',
  async (context) => {
    const { storage, id, write } = context;
    const members = ['a', 'b', 'c', 'd'].map((name) => id(`u-${name}`));
    const run = async (communityId: string, serial: boolean) => {
      await storage.writes.applyMemberships(
        members.map((userId) => ({ communityId, userId, active: true, at: at(0) })),
        write(NOW),
      );
      const posts = Array.from({ length: WRITERS }, (_, n) =>
        aPost(members[n % members.length] as string, {
          id: id(`${communityId}-p-${n}`),
          at: at(1, n % 4),
          communityId,
        }),
      );
      const apply = (post: (typeof posts)[number]) =>
        applyOperation(storage, { kind: 'posts', communityId, posts: [post], now: NOW }, write);
      if (serial) for (const post of posts) await apply(post);
      else await Promise.all(posts.map(apply));
    };
    await run(id('c-serial'), true);
    await run(id('c-parallel'), false);
    for (const userId of members) {
      const records = await tray(context, userId);
      const of = (communityId: string) => records.filter((record) => record.targetId === communityId);
      // Two empty trays would compare equal too: every member gets the others' posts.
      expect(of(id('c-serial')), userId).to.not.be.empty;
      expect(comparable(of(id('c-parallel')), ['c-parallel']), userId).to.deep.equal(
        comparable(of(id('c-serial')), ['c-serial']),
      );
    }
  },
);

conformanceCase(
  'concurrency: joins, posts and comments of one community at once, after leaves, end as the reference tray',
  async (context) => {
    const { storage, id, write } = context;
    const communityId = id('c-busy');
    const members = ['a', 'b', 'c', 'd', 'e'].map((name) => id(`u-${name}`));
    const member = (n: number) => members[n % members.length] as string;
    const operations: TrayOperation[] = [
      ...members.map((userId, n): TrayOperation => ({
        kind: 'membership',
        changes: [{ communityId, userId, active: true, at: at(0, n) }],
        now: NOW,
      })),
      // Two members leave and rejoin, one leaves for good: each while posts and comments go on.
      ...[0, 1, 2].map((n): TrayOperation => ({
        kind: 'membership',
        changes: [{ communityId, userId: member(n), active: false, at: at(2, n) }],
        now: NOW,
      })),
      ...[0, 1].map((n): TrayOperation => ({
        kind: 'membership',
        changes: [{ communityId, userId: member(n), active: true, at: at(4, n) }],
        now: NOW,
      })),
      ...Array.from({ length: WRITERS }, (_, n): TrayOperation => ({
        kind: 'posts',
        communityId,
        posts: [aPost(member(n + 3), { id: id(`busy-p-${n}`), at: at(1 + (n % 5), n), communityId })],
        now: NOW,
      })),
      ...Array.from({ length: WRITERS }, (_, n): TrayOperation => ({
        kind: 'personal',
        activities: [
          aComment(
            member(n + 1),
            { postId: id('busy-owned'), owner: member(1) },
            { id: id(`busy-cm-${n}`), at: at(1 + (n % 5), n), communityId },
          ),
        ],
        now: NOW,
      })),
    ];
    // A leave processed at once with an action it covers may go either way (the action counts
    // when it was processed first): the leaves go first, one by one, then the rest at once.
    const isLeave = (operation: TrayOperation) =>
      operation.kind === 'membership' && operation.changes.some((change) => !change.active);
    const leaves = operations.filter(isLeave);
    const others = operations.filter((operation) => !isLeave(operation));
    for (const operation of leaves) await applyOperation(storage, operation, write);
    await Promise.all(others.map((operation) => applyOperation(storage, operation, write)));
    // The rules make the rest independent of the order: the model applies them one by one.
    const model = referenceTray([...leaves, ...others], { retentionDays: RETENTION_DAYS });
    for (const userId of members) {
      const stored = comparable(await tray(context, userId), []);
      const expected = comparable(liveRecords(model, userId, NOW), []);
      const withoutRead = (list: typeof stored) => list.map(({ hasRead: _hasRead, ...rest }) => rest);
      expect(withoutRead(stored), userId).to.deep.equal(withoutRead(expected));
    }
  },
);
