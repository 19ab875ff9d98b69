import { expect } from 'chai';
import { MAX_MUTES_IN_FORCE, type MuteTargetType } from '../../../../tray-service/domain/mute.ts';
import type { StoredEvent } from '../../../../tray-service/domain/stored-event.ts';
import { applyJob } from '../../../../tray-service/use-cases/apply-job.ts';
import { createEventRecipients } from '../../../../tray-service/use-cases/event-recipients.ts';
import { commentEvent, postEvent, type TestEnvelope } from '../../../tray-service/worker/event-builder.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';

// The events console's recipients (use-cases/event-recipients.ts over CommunityMembersPort) with
// mutes in play: the users it lists and counts are exactly those whose tray the event changed,
// the mutes judged by time as the fan-out and the personal writes judge them
// (docs/tray-rules.md#inbox). Events go through the worker's apply path.

const iso = (minute: number) => new Date(at(minute)).toISOString();

function consoleOf(context: ConformanceContext) {
  const { storage, id, write } = context;
  const inbox = storage.inbox;
  if (!inbox) throw new Error('the case needs the inbox port');
  const communityId = id('c-hike');
  const recipients = createEventRecipients(storage.communityMembers);
  let delivered = 0;
  return {
    communityId,
    recipients,
    /** Applies the event as the worker does, on the tray's clock NOW; returns it as stored. */
    deliver: (envelope: TestEnvelope): Promise<StoredEvent> =>
      applyJob(
        {
          dedupeKey: id(`ev-${delivered++}`),
          webhook: 'conformance',
          receivedAt: new Date(NOW).toISOString(),
          ...envelope,
        },
        {
          storage,
          eventsRetentionDays: RETENTION_DAYS,
          trayRetentionDays: RETENTION_DAYS,
          networkId: 'default',
          now: () => NOW,
        },
      ).then((applied) => applied.event),
    join: (users: readonly string[], minute: number) =>
      storage.writes.applyMemberships(
        users.map((user) => ({ communityId, userId: id(user), active: true, at: at(minute) })),
        write(NOW),
      ),
    /** The user's mute of the target (the case's id of `target`) put at `minute`, until `until`. */
    mute: (user: string, targetType: MuteTargetType, target: string, minute: number, until?: number) =>
      inbox.putMute(
        id(user),
        { targetType, targetId: id(target) },
        until === undefined ? null : at(until),
        at(minute),
        RETENTION_DAYS,
        MAX_MUTES_IN_FORCE,
      ),
    unmute: (user: string, targetType: MuteTargetType, target: string, minute: number) =>
      inbox.removeMute(id(user), { targetType, targetId: id(target) }, at(minute), RETENTION_DAYS),
    /**
     * Of `users`, those holding a record whose latest action is `actionId` (of `verb`, when
     * given): whose tray it changed.
     */
    async reached(users: readonly string[], actionId: string, verb?: string): Promise<string[]> {
      const found: string[] = [];
      for (const user of users) {
        const { records } = await storage.records.pageAfter(id(user), undefined, 50, NOW);
        const holds = (record: (typeof records)[number]) =>
          record.lastActionId === id(actionId) && (verb === undefined || record.verb === verb);
        if (records.some(holds)) found.push(id(user));
      }
      return found;
    },
    /** The summary of a community post made at `minute`: every one of `expected`, counted exactly. */
    async expectPostSummary(event: StoredEvent, expected: readonly string[], minute: number) {
      expect(await recipients.summary(event, 50)).to.deep.equal({
        users: expected,
        total: expected.length,
        community: { communityId, at: new Date(at(minute)) },
      });
    },
    /** Every page of `limit` recipients, followed by their cursors. */
    async pages(event: StoredEvent, limit: number): Promise<string[][]> {
      const pages: string[][] = [];
      let after: string | undefined;
      for (let guard = 0; guard < 20; guard++) {
        const page = await recipients.page(event, limit, after);
        pages.push(page.userIds);
        if (page.next === undefined) return pages;
        after = page.next;
      }
      throw new Error('the pages never ended');
    },
  };
}

conformanceCase(
  'event recipients: a comment on a post its owner muted before the comment has none; muted after it, the owner',
  async (context) => {
    const { id } = context;
    const tray = consoleOf(context);
    const onPost = (postId: string, commentId: string) =>
      commentEvent({
        commentId: id(commentId),
        postId: id(postId),
        author: id('u-cid'),
        postOwner: id('u-ana'),
        communityId: tray.communityId,
        createdAt: iso(5),
      });
    await tray.mute('u-ana', 'post', 'p-1', 4);
    // Put after the comment's time, before its delivery: the comment was made while unmuted.
    await tray.mute('u-ana', 'post', 'p-2', 6);
    const before = await tray.deliver(onPost('p-1', 'cm-1'));
    const after = await tray.deliver(onPost('p-2', 'cm-2'));

    expect(await tray.reached(['u-ana'], 'cm-1')).to.deep.equal([]);
    expect(await tray.recipients.summary(before, 50)).to.deep.equal({ users: [], total: 0 });
    expect(await tray.pages(before, 10)).to.deep.equal([[]]);

    expect(await tray.reached(['u-ana'], 'cm-2')).to.deep.equal([id('u-ana')]);
    expect(await tray.recipients.summary(after, 50)).to.deep.equal({ users: [id('u-ana')], total: 1 });
    expect(await tray.pages(after, 10)).to.deep.equal([[id('u-ana')]]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'event recipients: a community post leaves out the members whose mute of the community, the post or its author was in force at its time',
  async (context) => {
    const { id } = context;
    const tray = consoleOf(context);
    const members = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve', 'u-fay', 'u-gus', 'u-hal'];
    await tray.join(members, 0);
    await tray.mute('u-cid', 'community', 'c-hike', 1);
    // Ended by itself before the post, removed before it, put after it: none held it back.
    await tray.mute('u-dee', 'community', 'c-hike', 1, 3);
    await tray.mute('u-eve', 'community', 'c-hike', 1);
    await tray.unmute('u-eve', 'community', 'c-hike', 2);
    await tray.mute('u-hal', 'community', 'c-hike', 6);
    await tray.mute('u-fay', 'post', 'p-1', 1);
    await tray.mute('u-gus', 'user', 'u-ana', 1);
    const post = await tray.deliver(
      postEvent({ postId: id('p-1'), author: id('u-ana'), communityId: tray.communityId, createdAt: iso(5) }),
    );

    const expected = [id('u-ben'), id('u-dee'), id('u-eve'), id('u-hal')];
    expect(await tray.reached(members, 'p-1')).to.deep.equal(expected);
    await tray.expectPostSummary(post, expected, 5);
    expect(await tray.recipients.summary(post, 2)).to.include({ total: 4 });
    expect((await tray.recipients.summary(post, 2)).users).to.deep.equal(expected.slice(0, 2));
    expect(await tray.pages(post, 3)).to.deep.equal([expected.slice(0, 3), expected.slice(3)]);
    expect(await tray.pages(post, 4)).to.deep.equal([expected]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'event recipients: an @mention reaches a user who muted the post or the community, never one who muted its author, and pages across the boundary',
  async (context) => {
    const { id } = context;
    const tray = consoleOf(context);
    await tray.join(['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve'], 0);
    await tray.mute('u-ana', 'post', 'p-1', 1);
    await tray.mute('u-cid', 'community', 'c-hike', 1);
    await tray.mute('u-dee', 'user', 'u-ben', 1);
    await tray.mute('u-eve', 'community', 'c-hike', 1);
    await tray.mute('u-zed', 'community', 'c-hike', 1);

    // Ana's comment record is held back by her post mute; her mention passes it.
    const comment = await tray.deliver(
      commentEvent({
        commentId: id('cm-1'),
        postId: id('p-1'),
        author: id('u-ben'),
        postOwner: id('u-ana'),
        communityId: tray.communityId,
        createdAt: iso(5),
        mentions: [id('u-ana'), id('u-cid'), id('u-dee')],
      }),
    );
    const mentioned = [id('u-ana'), id('u-cid')];
    expect(await tray.reached(['u-ana', 'u-cid', 'u-dee'], 'cm-1')).to.deep.equal(mentioned);
    expect(
      (await context.storage.records.pageAfter(id('u-ana'), undefined, 10, NOW)).records,
    ).to.have.lengthOf(1);
    expect(await tray.recipients.summary(comment, 50)).to.deep.equal({ users: mentioned, total: 2 });
    expect(await tray.pages(comment, 1)).to.deep.equal([[id('u-ana')], [id('u-cid')]]);

    // Cid, a member muting the community, gets the mention alone; Zed is no member.
    const post = await tray.deliver(
      postEvent({
        postId: id('p-2'),
        author: id('u-ana'),
        communityId: tray.communityId,
        createdAt: iso(6),
        mentions: [id('u-cid'), id('u-zed')],
      }),
    );
    const expected = [id('u-ben'), id('u-cid'), id('u-dee'), id('u-zed')];
    expect(await tray.reached(['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve', 'u-zed'], 'p-2')).to.deep.equal(
      expected,
    );
    await tray.expectPostSummary(post, expected, 6);
    expect(await tray.pages(post, 2)).to.deep.equal([expected.slice(0, 2), expected.slice(2)]);
    expect(await tray.pages(post, 1)).to.deep.equal(expected.map((userId) => [userId]));
    expect(await tray.pages(post, 3)).to.deep.equal([expected.slice(0, 3), expected.slice(3)]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'event recipients: a community post lists by the processing order the members whose leave came after it, a late join and leave, and counts a mentioned late one once',
  async (context) => {
    const { id, storage, write } = context;
    const tray = consoleOf(context);
    const change = (user: string, active: boolean, minute: number) =>
      storage.writes.applyMemberships(
        [{ communityId: tray.communityId, userId: id(user), active, at: at(minute) }],
        write(NOW),
      );
    await tray.join(['u-ana', 'u-ben', 'u-eve', 'u-fay'], 0);
    // Dee joins and leaves at the post's minute before it: never a member for it. Fay's leave
    // before the post was processed before it.
    await change('u-dee', true, 5);
    await change('u-dee', false, 5);
    await change('u-fay', false, 4);
    const post = await tray.deliver(
      postEvent({
        postId: id('p-1'),
        author: id('u-ana'),
        communityId: tray.communityId,
        createdAt: iso(5),
        mentions: [id('u-ben')],
      }),
    );
    // All processed after the post: Ben's leave takes nothing back; Cid joins and leaves at its
    // minute (the join adds it, the leave takes nothing back); Gus joins before its time and
    // leaves after his join was processed.
    await change('u-ben', false, 3);
    await change('u-cid', true, 5);
    await change('u-cid', false, 5);
    await change('u-gus', true, 1);
    await change('u-gus', false, 2);

    const expected = [id('u-ben'), id('u-cid'), id('u-eve'), id('u-gus')];
    const users = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve', 'u-fay', 'u-gus'];
    expect(await tray.reached(users, 'p-1', 'post')).to.deep.equal(expected);
    // Ben, mentioned, holds the mention too: one user, counted once.
    expect(await tray.reached(users, 'p-1', 'mention')).to.deep.equal([id('u-ben')]);
    await tray.expectPostSummary(post, expected, 5);
    expect(await tray.pages(post, 2)).to.deep.equal([expected.slice(0, 2), expected.slice(2)]);
    expect(await tray.pages(post, 3)).to.deep.equal([expected.slice(0, 3), expected.slice(3)]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'event recipients: a comment lists its post’s owner whose leave was processed after it, not a mentioned user whose leave came first',
  async (context) => {
    const { id, storage, write } = context;
    const tray = consoleOf(context);
    const leave = (user: string, minute: number) =>
      storage.writes.applyMemberships(
        [{ communityId: tray.communityId, userId: id(user), active: false, at: at(minute) }],
        write(NOW),
      );
    await tray.join(['u-ana', 'u-ben', 'u-cid'], 0);
    await leave('u-ben', 4);
    const comment = await tray.deliver(
      commentEvent({
        commentId: id('cm-1'),
        postId: id('p-1'),
        author: id('u-cid'),
        postOwner: id('u-ana'),
        communityId: tray.communityId,
        createdAt: iso(5),
        mentions: [id('u-ben')],
      }),
    );
    await leave('u-ana', 4);

    expect(await tray.reached(['u-ana', 'u-ben'], 'cm-1')).to.deep.equal([id('u-ana')]);
    expect(await tray.recipients.summary(comment, 50)).to.deep.equal({ users: [id('u-ana')], total: 1 });
    expect(await tray.pages(comment, 1)).to.deep.equal([[id('u-ana')]]);
  },
  { needs: 'inbox' },
);

conformanceCase(
  'event recipients: a deleted user is never listed, as a member of the community or as the owner of a post commented on, in a community or on their feed',
  async (context) => {
    const { id, storage, write } = context;
    const tray = consoleOf(context);
    await tray.join(['u-ana', 'u-ben', 'u-cid', 'u-dee'], 0);
    const post = await tray.deliver(
      postEvent({ postId: id('p-1'), author: id('u-ana'), communityId: tray.communityId, createdAt: iso(5) }),
    );
    const comment = await tray.deliver(
      commentEvent({
        commentId: id('cm-1'),
        postId: id('p-2'),
        author: id('u-cid'),
        postOwner: id('u-dee'),
        communityId: tray.communityId,
        createdAt: iso(6),
        mentions: [id('u-ben')],
      }),
    );
    const onFeed = await tray.deliver(
      commentEvent({
        commentId: id('cm-2'),
        postId: id('p-3'),
        author: id('u-cid'),
        postOwner: id('u-dee'),
        feed: 'user',
        createdAt: iso(6),
      }),
    );
    expect(await tray.recipients.summary(onFeed, 50)).to.deep.equal({ users: [id('u-dee')], total: 1 });
    // Dee's deletion removes her tray and leaves nothing to reach her (docs/tray-rules.md#deleted-users).
    await storage.writes.applyProfiles(
      [{ userId: id('u-dee'), displayName: 'Deleted user', deleted: true, at: at(7) }],
      write(NOW),
    );

    expect(await tray.reached(['u-ben', 'u-cid', 'u-dee'], 'p-1', 'post')).to.deep.equal([
      id('u-ben'),
      id('u-cid'),
    ]);
    await tray.expectPostSummary(post, [id('u-ben'), id('u-cid')], 5);
    expect(await tray.pages(post, 1)).to.deep.equal([[id('u-ben')], [id('u-cid')]]);
    expect(await tray.reached(['u-ben', 'u-dee'], 'cm-1')).to.deep.equal([id('u-ben')]);
    expect(await tray.recipients.summary(comment, 50)).to.deep.equal({ users: [id('u-ben')], total: 1 });
    expect(await tray.pages(comment, 1)).to.deep.equal([[id('u-ben')]]);
    expect(await tray.recipients.summary(onFeed, 50)).to.deep.equal({ users: [], total: 0 });
  },
  { needs: 'inbox' },
);
