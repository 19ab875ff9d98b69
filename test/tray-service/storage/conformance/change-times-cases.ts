import { expect } from 'chai';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import type { MarkedRecord } from '../../../../tray-service/storage/port.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import type { TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { inboxOf } from './inbox-operation.ts';
import { modelledStorage } from './modelled-storage.ts';

/**
 * A record's changedAt is what a live stream tells its states apart by (docs/live-tray.md, "Event
 * ids"): each write of a record stamps one later than the record's last, whichever writer made
 * it and whatever its clock says, so a state never passes for an earlier one already delivered.
 * Each case has a writer whose clock runs a minute ahead write first; every later writer is behind.
 */

const AHEAD = NOW + 60_000;

/** Applies operations to the record of `verb` of `user` and expects each to move its changedAt forward. */
function stamps(context: ConformanceContext, user: string, verb: TrayRecord['verb']) {
  let last = 0;
  // Read as a stream's catch-up reads it: an archived or snoozed record too.
  const changedAt = async () =>
    (await context.storage.records.changedSince(context.id(user), -1, NOW)).find((one) => one.verb === verb)
      ?.changedAt ?? 0;
  return {
    async first(): Promise<void> {
      last = await changedAt();
      expect(last, 'the first write').to.equal(AHEAD);
    },
    async after(what: string, operation: () => Promise<void>): Promise<void> {
      await operation();
      const next = await changedAt();
      expect(next, what).to.be.above(last);
      last = next;
    },
  };
}

const post = (context: ConformanceContext) => ({ postId: context.id('p-1'), owner: context.id('u-ana') });
const comment = (context: ConformanceContext, actor: string, minute: number) =>
  aComment(context.id(actor), post(context), { id: context.id(`cm-${actor}`), at: at(minute), name: actor });

conformanceCase(
  "change times: every record write moves changedAt past the record's last, on a clock behind it",
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    const mark = (operation: TrayOperation) => () => tray.apply(operation);
    await tray.personal([comment(context, 'u-ben', 1)], AHEAD);
    const record = stamps(context, 'u-ana', 'comment');
    await record.first();
    const read = {
      kind: 'markRead',
      userId: ana,
      verb: 'comment',
      targetId: context.id('p-1'),
      now: NOW,
    } as const;
    await record.after('a read mark', mark(read));
    await record.after('new activity', () => tray.personal([comment(context, 'u-cy', 2)], NOW));
    await record.after('mark all read', mark({ kind: 'markAllRead', userId: ana, now: NOW }));
    await record.after(
      'a deleted actor',
      mark({ kind: 'deleteProfile', userId: context.id('u-cy'), at: at(3), now: NOW }),
    );
    await tray.expectModel('u-ana', NOW);

    // A late rejoin adds a post that fell after it: the record is computed again.
    const community = modelledStorage(context, 'c-leave');
    const byAuthor = (author: string, minute: number) =>
      aPost(context.id(author), {
        id: context.id(`p-${author}-${minute}`),
        at: at(minute),
        communityId: community.communityId,
        name: author,
      });
    await community.membership('u-kim', true, 0, AHEAD);
    await community.membership('u-kim', false, 2, AHEAD);
    await community.posts([byAuthor('u-pete', 1), byAuthor('u-eve', 3)], AHEAD);
    const kim = stamps(context, 'u-kim', 'post');
    await kim.first();
    await kim.after('a late rejoin', () => community.membership('u-kim', true, 3, NOW));
    await community.expectModel('u-kim', NOW);
  },
);

conformanceCase(
  "change times: every inbox mark and the wake-up move changedAt past the record's last, on a clock behind it",
  async (context) => {
    const tray = modelledStorage(context);
    const ana = context.id('u-ana');
    await tray.personal([comment(context, 'u-ben', 1)], AHEAD);
    const [key] = (await tray.records('u-ana', NOW)).map((one) => one.key);
    const ids = [key ?? ''];
    const record = stamps(context, 'u-ana', 'comment');
    await record.first();
    const mark = (operation: TrayOperation) => () => tray.apply(operation);
    await record.after('seen', mark({ kind: 'seen', userId: ana, ids, now: NOW }));
    await record.after('archive', mark({ kind: 'archive', userId: ana, ids, now: NOW }));
    await record.after('unarchive', mark({ kind: 'unarchive', userId: ana, ids, now: NOW }));
    await record.after('snooze', mark({ kind: 'snooze', userId: ana, ids, until: NOW + 1, now: NOW }));
    await record.after('the wake-up', mark({ kind: 'wake', now: NOW + 1 }));
    await tray.expectModel('u-ana', NOW + 1);
  },
  { needs: 'inbox' },
);

conformanceCase(
  "change times: a removal that shrinks a record moves changedAt past the record's last, on a clock behind it",
  async (context) => {
    const tray = modelledStorage(context);
    await tray.personal([comment(context, 'u-ben', 1), comment(context, 'u-cy', 2)], AHEAD);
    const record = stamps(context, 'u-ana', 'comment');
    await record.first();
    await record.after('a removal', () =>
      tray.apply({
        kind: 'removal',
        removals: [{ kind: 'comment', id: context.id('cm-u-cy'), postId: context.id('p-1'), at: NOW }],
        now: NOW,
      }),
    );
    await tray.expectModel('u-ana', NOW);
  },
  { needs: 'removals' },
);

/** What a mark returns of each record it changed: its new changedAt and the one it replaced. */
const times = (records: readonly MarkedRecord[]) =>
  records.map(({ changedAt, changedBefore }) => ({ changedAt, changedBefore }));

conformanceCase(
  'change times: a read mark returns each record it changed with the changedAt of the state it replaced',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    await storage.writes.applyPersonal([comment(context, 'u-ben', 1)], write(AHEAD));
    const read = await storage.records.markRead(ana, 'comment', id('p-1'), NOW);
    expect(times(read.changed)).to.deep.equal([{ changedAt: AHEAD + 1, changedBefore: AHEAD }]);
    await storage.writes.applyPersonal([comment(context, 'u-cy', 2)], write(NOW));
    const all = await storage.records.markAllRead(ana, NOW);
    expect(times(all)).to.deep.equal([{ changedAt: AHEAD + 3, changedBefore: AHEAD + 2 }]);
  },
);

conformanceCase(
  'change times: an inbox mark returns each record it changed with the changedAt of the state it replaced',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    await storage.writes.applyPersonal([comment(context, 'u-ben', 1)], write(AHEAD));
    const inbox = inboxOf(storage);
    const seen = await inbox.mark(ana, { kind: 'seen', ids: 'all' }, NOW);
    expect(times(seen)).to.deep.equal([{ changedAt: AHEAD + 1, changedBefore: AHEAD }]);
    const archived = await inbox.mark(ana, { kind: 'archive', ids: seen.map((one) => one.key) }, NOW);
    expect(times(archived)).to.deep.equal([{ changedAt: AHEAD + 2, changedBefore: AHEAD + 1 }]);
  },
  { needs: 'inbox' },
);
