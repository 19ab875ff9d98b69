import { expect } from 'chai';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { aComment, aCommentReaction, aMention, aPost, aReply } from '../../../support/activity-builder.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { actorIdsOf, at, keysOf, MINUTE, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { inboxOf } from './inbox-operation.ts';
import { modelledStorage } from './modelled-storage.ts';
import { toldRecords } from './told-records.ts';

/**
 * The worker's personal writes (TrayWritesPort.applyPersonal, applyProfiles): grouping by verb and
 * target, actors and actorsCount, the latest fields, redelivery and late delivery, read state.
 */

async function onlyRecord({ storage }: ConformanceContext, userId: string, now = NOW): Promise<TrayRecord> {
  const { records } = await storage.records.pageAfter(userId, undefined, 10, now);
  expect(records, `${userId}'s records`).to.have.length(1);
  return records[0] as TrayRecord;
}

conformanceCase(
  'writes: groups by verb and target, 3 newest distinct actors named, every distinct actor counted',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const post = { postId: id('p-1'), owner: ana };
    const comment = (actor: string, minute: number) =>
      aComment(id(actor), post, {
        id: id(`cm-${actor}-${minute}`),
        at: at(minute),
        name: actor.toUpperCase(),
        segment: minute,
      });
    await storage.writes.applyPersonal(
      [comment('ben', 1), comment('cid', 2), comment('dee', 3), comment('eve', 4), comment('ben', 5)],
      write(NOW),
    );
    const record = await onlyRecord(context, ana);
    expect(record).to.deep.include({
      userId: ana,
      verb: 'comment',
      targetId: post.postId,
      targetType: 'post',
      targetName: 'Hiking Club',
      parentTargetId: 'c-hike',
      lastActionId: id('cm-ben-5'),
      lastActionSegmentNo: 5,
      actorsCount: 4,
      lastUpdate: at(5),
      hasRead: false,
      unreadAt: NOW,
      changedAt: NOW,
    });
    expect(record.actors).to.deep.equal([
      { userId: id('ben'), name: 'BEN', at: at(5) },
      { userId: id('eve'), name: 'EVE', at: at(4) },
      { userId: id('dee'), name: 'DEE', at: at(3) },
    ]);
  },
);

conformanceCase('writes: the recipient’s own actions are never notified nor counted', async (context) => {
  const { storage, id, write } = context;
  const ana = id('u-ana');
  const post = { postId: id('p-1'), owner: ana };
  await storage.writes.applyPersonal([aComment(ana, post, { id: id('cm-1'), at: at(1) })], write(NOW));
  expect(await storage.records.count(ana, NOW)).to.equal(0);
  await storage.writes.applyPersonal(
    [
      aComment(id('u-ben'), post, { id: id('cm-2'), at: at(2) }),
      aComment(ana, post, { id: id('cm-3'), at: at(3) }),
    ],
    write(NOW),
  );
  const record = await onlyRecord(context, ana);
  expect(actorIdsOf(record)).to.deep.equal([id('u-ben')]);
  expect(record).to.include({ actorsCount: 1, lastActionId: id('cm-2'), lastUpdate: at(2) });
});

conformanceCase('writes: a redelivery changes nothing, so a read record stays read', async (context) => {
  const { storage, id, write } = context;
  const ana = id('u-ana');
  const activity = aComment(id('u-ben'), { postId: id('p-1'), owner: ana }, { id: id('cm-1'), at: at(1) });
  await storage.writes.applyPersonal([activity], write(NOW));
  await storage.records.markRead(ana, 'comment', id('p-1'), NOW + 1);
  await storage.writes.applyPersonal([activity, activity], write(NOW + 2));
  expect(await onlyRecord(context, ana, NOW + 2)).to.include({
    hasRead: true,
    unreadAt: NOW,
    actorsCount: 1,
  });
  expect(await storage.records.countUnread(ana, 0, NOW + 2)).to.equal(0);
});

conformanceCase(
  'writes: new activity makes a read record unread again, at the tray’s clock',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const post = { postId: id('p-1'), owner: ana };
    await storage.writes.applyPersonal(
      [aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1) })],
      write(NOW),
    );
    await storage.records.markAllRead(ana, NOW + 1);
    await storage.writes.applyPersonal(
      [aComment(id('u-cid'), post, { id: id('cm-2'), at: at(0) })],
      write(NOW + 2),
    );
    const record = await onlyRecord(context, ana, NOW + 2);
    // Older than the record's newest action: counted, but the latest fields stay.
    expect(record).to.include({
      hasRead: false,
      unreadAt: NOW + 2,
      actorsCount: 2,
      lastActionId: id('cm-1'),
      lastUpdate: at(1),
    });
    expect(actorIdsOf(record)).to.deep.equal([id('u-ben'), id('u-cid')]);
    expect(await storage.records.countUnread(ana, NOW + 1, NOW + 2)).to.equal(1);
  },
);

conformanceCase(
  'writes: equal times are ordered by action id, whatever order they arrive in',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const dee = id('u-dee');
    const burst = (owner: string) =>
      ['b', 'a', 'c'].map((suffix, index) =>
        aComment(
          id(`u-${suffix}`),
          { postId: id(`p-${owner}`), owner },
          { id: id(`cm-${suffix}`), at: at(1, 500), segment: index },
        ),
      );
    await storage.writes.applyPersonal(burst(ana), write(NOW));
    for (const activity of burst(dee).reverse()) await storage.writes.applyPersonal([activity], write(NOW));
    for (const userId of [ana, dee]) {
      const record = await onlyRecord(context, userId);
      expect(record.lastActionId).to.equal(id('cm-c'));
      expect(actorIdsOf(record)).to.deep.equal([id('u-c'), id('u-b'), id('u-a')]);
    }
  },
);

conformanceCase(
  'writes: replies, comment reactions and mentions make the records the contract lists',
  async (context) => {
    const { storage, id, write } = context;
    const cid = id('u-cid');
    const parent = { commentId: id('cm-1'), owner: cid, postId: id('p-1') };
    await storage.writes.applyPersonal(
      [
        aReply(id('u-ben'), parent, { id: id('cm-2'), at: at(1), segment: 2 }),
        aCommentReaction(id('u-dee'), parent, { id: id('r-1'), at: at(2) }),
        aMention(
          id('u-ben'),
          cid,
          { in: 'comment', commentId: id('cm-2'), postId: id('p-1') },
          { at: at(1) },
        ),
        aMention(id('u-dee'), cid, { in: 'post', postId: id('p-2') }, { at: at(3) }),
      ],
      write(NOW),
    );
    const { records } = await storage.records.pageAfter(cid, undefined, 10, NOW);
    expect(
      records.map((record) => [
        record.verb,
        record.targetId,
        record.parentTargetId,
        record.mentionIn,
        record.lastActionId,
      ]),
    ).to.deep.equal([
      ['mention', id('p-2'), undefined, 'post', id('p-2')],
      ['mentreact', id('cm-1'), id('p-1'), undefined, id('r-1')],
      ...[
        ['mentreply', id('cm-1'), id('p-1'), undefined, id('cm-2')],
        ['mention', id('cm-2'), id('p-1'), 'comment', id('cm-2')],
      ].sort((a, b) => (keyOf(b, cid) > keyOf(a, cid) ? 1 : -1)),
    ]);
    expect(await storage.records.count(cid, NOW, ['mention'])).to.equal(2);
  },
);

function keyOf(row: (string | undefined)[], userId: string): string {
  return encodeRecordKey({ verb: String(row[0]), targetId: String(row[1]), userId });
}

conformanceCase('writes: a record re-created after delete-all counts its actors afresh', async (context) => {
  const { storage, id, write } = context;
  const ana = id('u-ana');
  const post = { postId: id('p-1'), owner: ana };
  await storage.writes.applyPersonal(
    [
      aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1) }),
      aComment(id('u-cid'), post, { id: id('cm-2'), at: at(2) }),
    ],
    write(NOW),
  );
  await storage.records.deleteAll(ana);
  await storage.writes.applyPersonal(
    [aComment(id('u-dee'), post, { id: id('cm-3'), at: at(3) })],
    write(NOW + 1),
  );
  const record = await onlyRecord(context, ana, NOW + 1);
  expect(actorIdsOf(record)).to.deep.equal([id('u-dee')]);
  expect(record).to.include({ actorsCount: 1, unreadAt: NOW + 1 });
});

conformanceCase(
  'writes: new activity on a record past its retention, not yet purged, counts its actors afresh',
  async (context) => {
    const { id } = context;
    const tray = modelledStorage(context);
    const post = { postId: id('p-1'), owner: id('u-ana') };
    await tray.membership('u-ana', true, 0);
    await tray.personal([
      aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1) }),
      aComment(id('u-cid'), post, { id: id('cm-2'), at: at(2) }),
    ]);
    await tray.posts([aPost(id('u-ben'), { id: id('p-8'), at: at(1), communityId: tray.communityId })]);
    // Both records expired a minute ago; nothing has purged them.
    const later = at(2) + RETENTION_DAYS * DAY_MS + MINUTE;
    await tray.personal([aComment(id('u-dee'), post, { id: id('cm-3'), at: later })], later);
    await tray.posts(
      [aPost(id('u-dee'), { id: id('p-9'), at: later, communityId: tray.communityId })],
      later,
    );
    for (const verb of ['comment', 'post'] as const) {
      const record = await tray.record('u-ana', verb, later);
      expect(actorIdsOf(record), verb).to.deep.equal([id('u-dee')]);
      expect(record, verb).to.include({ actorsCount: 1, lastUpdate: later });
    }
    await tray.expectModel('u-ana', later);
  },
);

conformanceCase(
  'writes: onWritten is told the records written, as readers then see them, inbox state included',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const told: InboxRecord[] = [];
    const activity = aComment(id('u-ben'), { postId: id('p-1'), owner: ana }, { id: id('cm-1'), at: at(1) });
    await storage.writes.applyPersonal(
      [activity],
      write(NOW, { onWritten: async (records) => void told.push(...records) }),
    );
    expect(told).to.deep.equal((await inboxOf(storage).page(ana, 'all', undefined, 10, NOW)).records);
    told.length = 0;
    await storage.writes.applyPersonal(
      [activity],
      write(NOW + 1, { onWritten: async (records) => void told.push(...records) }),
    );
    expect(told, 'a redelivery writes nothing').to.deep.equal([]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'writes: a redelivery, or an older action as late, onto an expired record tells live streams nothing and shows nothing',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const post = { postId: id('p-1'), owner: ana };
    const activity = aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1) });
    await storage.writes.applyPersonal([activity], write(NOW));
    await storage.records.markRead(ana, 'comment', id('p-1'), NOW + 1);
    // A replay or a spool drained long after: the record expired (lastUpdate + retention) meanwhile,
    // and expired records are never shown, so no stream may be told of one either.
    const later = at(1) + RETENTION_DAYS * DAY_MS + 1;
    const told = toldRecords();
    await storage.writes.applyPersonal([activity], write(later, { onWritten: told.onWritten }));
    expect(told.take(), 'records told of the redelivery').to.deep.equal([]);
    await storage.writes.applyPersonal(
      [aComment(id('u-cid'), post, { id: id('cm-0'), at: at(0) })],
      write(later + 1, { onWritten: told.onWritten }),
    );
    expect(told.take(), 'records told of the older action').to.deep.equal([]);
    expect(await storage.records.count(ana, later + 1)).to.equal(0);
    expect(await storage.records.countUnread(ana, 0, later + 1)).to.equal(0);
  },
);

conformanceCase(
  'writes: a deleted user is renamed in an expired record too, told to onWritten as written and shown to no reader',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const ben = id('u-ben');
    await storage.writes.applyPersonal(
      [aComment(ben, { postId: id('p-1'), owner: ana }, { id: id('cm-1'), at: at(1) })],
      write(NOW),
    );
    const later = at(1) + RETENTION_DAYS * DAY_MS + 1;
    const told = toldRecords();
    await storage.writes.applyProfiles(
      [{ userId: ben, displayName: 'Deleted user', deleted: true, at: later }],
      write(later, { onWritten: told.onWritten }),
    );
    // The adapter tells what it wrote; keeping expired records from live streams is the apply-job
    // use case's (test/tray-service/use-cases/apply-job.test.ts).
    expect(
      told.take().map((record) => [record.key, record.actors.map((actor) => actor.name)]),
      'records told',
    ).to.deep.equal([
      [encodeRecordKey({ verb: 'comment', targetId: id('p-1'), userId: ana }), ['Deleted user']],
    ]);
    expect(await storage.records.count(ana, later)).to.equal(0);
  },
);

conformanceCase(
  'writes: a live user whose display name is `Deleted user` is not marked deleted, before or after another user is deleted',
  async (context) => {
    const { storage, id, write } = context;
    const [ana, ben, dee] = [id('u-ana'), id('u-ben'), id('u-dee')];
    const post = { postId: id('p-1'), owner: ana };
    await storage.writes.applyPersonal(
      [
        aComment(dee, post, { id: id('cm-1'), at: at(1), name: 'Deleted user' }),
        aComment(ben, post, { id: id('cm-2'), at: at(2), name: 'Ben' }),
      ],
      write(NOW),
    );
    await storage.writes.applyProfiles(
      [{ userId: ben, displayName: 'Deleted user', deleted: true, at: at(3) }],
      write(NOW + 1),
    );
    expect((await onlyRecord(context, ana, NOW + 1)).actors).to.deep.equal([
      { userId: ben, name: 'Deleted user', deleted: true, at: at(2) },
      { userId: dee, name: 'Deleted user', at: at(1) },
    ]);
  },
);

conformanceCase(
  'writes: a deleted user shows as `Deleted user` without image and loses their own tray; a rename changes nothing',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const ben = id('u-ben');
    await storage.writes.applyPersonal(
      [
        aComment(
          ben,
          { postId: id('p-1'), owner: ana },
          { id: id('cm-1'), at: at(1), name: 'Ben', imageUrl: 'https://img.example/ben' },
        ),
        aComment(ana, { postId: id('p-2'), owner: ben }, { id: id('cm-2'), at: at(2), name: 'Ana' }),
      ],
      write(NOW),
    );
    await storage.writes.applyProfiles(
      [{ userId: ben, displayName: 'Benjamin', deleted: false, at: at(3) }],
      write(NOW + 1),
    );
    expect((await onlyRecord(context, ana, NOW + 1)).actors).to.deep.equal([
      { userId: ben, name: 'Ben', imageUrl: 'https://img.example/ben', at: at(1) },
    ]);
    await storage.writes.applyProfiles(
      [{ userId: ben, displayName: 'Deleted user', deleted: true, at: at(4) }],
      write(NOW + 2),
    );
    const record = await onlyRecord(context, ana, NOW + 2);
    // Marked deleted, so messages name them in the reader's language; the name stays the contract's.
    expect(record.actors).to.deep.equal([{ userId: ben, name: 'Deleted user', deleted: true, at: at(1) }]);
    expect(record).to.include({ hasRead: false, unreadAt: NOW, changedAt: NOW + 2 });
    expect(await storage.records.count(ben, NOW + 2)).to.equal(0);
    // Records recomputed later keep the new name: the group's snapshot changed too.
    await storage.writes.applyPersonal(
      [aComment(id('u-cid'), { postId: id('p-1'), owner: ana }, { id: id('cm-3'), at: at(5) })],
      write(NOW + 3),
    );
    expect(
      (await onlyRecord(context, ana, NOW + 3)).actors.map((actor) => [actor.name, actor.deleted ?? false]),
    ).to.deep.equal([
      [id('u-cid'), false],
      ['Deleted user', true],
    ]);
    expect(keysOf(await storage.records.pageNumber(ben, 1, 10, NOW + 3, []))).to.deep.equal([]);
  },
);

// The port keeps the storable rule itself: PostgreSQL's text and jsonb hold neither U+0000 nor a
// lone surrogate, FerretDB stores on PostgreSQL, and UTF-8 cannot carry a lone surrogate at all.
conformanceCase(
  'writes: a name holding U+0000 or a lone surrogate is stored with U+FFFD in its place, on every write',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const post = { postId: id('p-1'), owner: ana };
    await storage.writes.applyPersonal(
      [aComment(id('u-ben'), post, { id: id('cm-1'), at: at(1), name: 'B\u0000en \ud83d' })],
      write(NOW),
    );
    const record = await onlyRecord(context, ana);
    expect(record.actors.map((actor) => actor.name)).to.deep.equal(['B\uFFFDen \uFFFD']);
    // And a community's post, fanned out to its members.
    const communityId = id('c-hike');
    const cid = id('u-cid');
    await storage.writes.applyMemberships(
      [{ communityId, userId: cid, active: true, at: at(0) }],
      write(NOW),
    );
    await storage.writes.fanOutPosts(
      communityId,
      [aPost(id('u-dee'), { id: id('p-1'), at: at(2), communityId, name: 'D\u0000ee \udc00' })],
      write(NOW),
    );
    const posted = await onlyRecord(context, cid);
    expect(posted.actors.map((actor) => actor.name)).to.deep.equal(['D\uFFFDee \uFFFD']);
  },
);
