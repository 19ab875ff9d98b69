import { dedupeKey } from '../../../receiver/dedupe-key.ts';
import { sendSignedWebhook } from '../send-signed-webhook.ts';
import { openDemoPage } from './demo-page.ts';
import { trayCaller } from './tray-caller.ts';
import {
  commentBody,
  commentDeleteBody,
  joinBody,
  postBody,
  type WalkPost,
  type WalkUser,
} from './walk-events.ts';
import { expectThat, step, waitFor } from './walk-step.ts';

/** Where the stack listens, its secrets, and a tag that makes this walk's ids its own. */
export interface WalkStack {
  receiver: string;
  tray: string;
  admin: string;
  webhookSecret: string;
  jwtSecret: string;
  adminToken: string;
  run: string;
}

interface TrayRecord {
  v_tarid_uid: string;
  verb: string;
  description: string;
  hasRead: boolean;
  isSeen: boolean;
  lastUpdate: number;
  lastActionId: string;
  actorsCount: number;
  actors: { name: string }[];
  archivedAt: number | null;
  snoozedUntil: number | null;
}

/**
 * The inbox as a new user meets it on `npm start`, step by step as docs/tray-api.md#the-inbox shows
 * it with curl: mute a post, a comment on it changes nothing while an @mention in it arrives,
 * archive all read, snooze a record for 5 s and watch it come back live on the demo page (with the
 * unseen badge), delete a comment and watch its group shrink (in the API and on the page), unmute.
 * Each step prints what it saw and its timing, and the walk stops at the first wrong outcome.
 */
export async function walkInbox(stack: WalkStack): Promise<void> {
  const id = (name: string) => `walk-${stack.run}-${name}`;
  const user = (displayName: string): WalkUser => ({ userId: id(displayName.toLowerCase()), displayName });
  const [ana, ben, cid, dee, eve] = ['Ana', 'Ben', 'Cid', 'Dee', 'Eve'].map(user) as [
    WalkUser,
    WalkUser,
    WalkUser,
    WalkUser,
    WalkUser,
  ];
  const community = { communityId: id('hike'), displayName: 'Hiking Club' };
  const post = (name: string): WalkPost => ({ postId: id(name), owner: ana, community });
  const [muted, grouped, read] = [post('p-mute'), post('p-group'), post('p-read')];
  const recordOf = (p: WalkPost) => `comment_${p.postId}_${ana.userId}`;
  const api = await trayCaller(stack.tray, stack.jwtSecret, ana.userId);

  /** Sends one signed event; answers its stored event's key and when the receiver acknowledged it. */
  const send = async (body: string) => {
    const res = await sendSignedWebhook(stack.receiver, body, stack.webhookSecret);
    const answer = await res.text();
    expectThat(res.status === 200, `the receiver answered ${res.status} ${answer}`);
    return { key: dedupeKey(Buffer.from(body)), ackedAt: performance.now() };
  };
  const view = async (name: 'inbox' | 'archived' | 'snoozed' | 'all') => {
    const answer = await api.call('GET', `/notifications/v3/history?view=${name}`);
    expectThat(answer.status === 200, `GET history?view=${name} answered ${answer.status}`);
    return answer.body.data as TrayRecord[];
  };
  const record = async (key: string) => (await view('all')).find((r) => r.v_tarid_uid === key);
  const counts = async () => {
    const answer = await api.call('GET', '/notifications/v3');
    expectThat(answer.status === 200, `GET /notifications/v3 answered ${answer.status}`);
    return answer.body.data as { totalUnreadCount: number; totalUnseenCount: number };
  };
  const applied = (key: string) =>
    waitFor(`stored event ${key.slice(0, 12)} applied`, async () => {
      const res = await fetch(`${stack.admin}/admin/events/${key}`, {
        headers: { authorization: `Bearer ${stack.adminToken}` },
      });
      const body = (await res.json()) as { status?: string; recipients?: { total: number } };
      return res.status === 200 && body.status === 'applied' ? body : undefined;
    });
  const t = Date.now();
  const cm = (n: string) => id(`cm-${n}`);

  await step('setup: Ana posts three times in Hiking Club; Ben, Cid, Dee and Eve comment', async () => {
    await send(joinBody(community, [ana, ben, cid, dee, eve], t - 600_000));
    for (const p of [muted, grouped, read]) await send(postBody(p, t - 540_000));
    await send(commentBody(muted, { commentId: cm('ben-1'), author: ben, segmentNumber: 1 }, t - 480_000));
    for (const [i, author] of [ben, cid, dee].entries())
      await send(
        commentBody(grouped, { commentId: cm(`g-${i}`), author, segmentNumber: i + 1 }, t - 420_000 + i),
      );
    await send(commentBody(read, { commentId: cm('eve-1'), author: eve, segmentNumber: 1 }, t - 360_000));
    const group = await waitFor('the three comment records', async () => {
      const inbox = await view('inbox');
      const found = [muted, grouped, read].map((p) => inbox.find((r) => r.v_tarid_uid === recordOf(p)));
      return found.every((r) => r !== undefined) && found[1]?.actorsCount === 3 ? found[1] : undefined;
    });
    const marked = await api.call('POST', '/notifications/v2/read', {
      verb: 'comment',
      targetId: read.postId,
    });
    expectThat(marked.status === 200, `POST v2/read answered ${marked.status}`);
    return `Ana's inbox holds 3 records ("${group.description}"); the one on ${read.postId} marked read`;
  });

  await step('mute a post (PUT /v3/mutes)', async () => {
    const answer = await api.call('PUT', '/notifications/v3/mutes', {
      targetType: 'post',
      targetId: muted.postId,
    });
    expectThat(answer.status === 200, `answered ${answer.status} ${JSON.stringify(answer.body)}`);
    return `200 in ${answer.ms.toFixed(1)} ms: ${JSON.stringify(answer.body.data)}`;
  });

  await step('a comment on the muted post: nothing', async () => {
    const before = await record(recordOf(muted));
    expectThat(before !== undefined, "the post's comment record is missing");
    const countsBefore = await counts();
    const { key, ackedAt } = await send(
      commentBody(muted, { commentId: cm('cid-1'), author: cid, segmentNumber: 2 }, Date.now()),
    );
    const event = await applied(key);
    const appliedMs = performance.now() - ackedAt;
    const after = await record(recordOf(muted));
    expectThat(
      after?.actorsCount === 1 &&
        after.lastActionId === before.lastActionId &&
        after.hasRead === before.hasRead,
      `the muted post's record changed: ${JSON.stringify(after)}`,
    );
    const now = await counts();
    expectThat(
      JSON.stringify(now) === JSON.stringify(countsBefore),
      `counts moved: ${JSON.stringify(countsBefore)} -> ${JSON.stringify(now)}`,
    );
    return `event applied ${appliedMs.toFixed(0)} ms after its ack (the events console counts ${event.recipients?.total} recipient(s)); "${after.description}" unchanged, counts ${JSON.stringify(now)}`;
  });

  const mentionId = cm('dee-mention');
  let mention: TrayRecord | undefined;
  await step('an @mention of Ana in a comment on the muted post: arrives', async () => {
    const { ackedAt } = await send(
      commentBody(
        muted,
        { commentId: mentionId, author: dee, segmentNumber: 3, mentions: [ana] },
        Date.now(),
      ),
    );
    mention = await waitFor('the mention record', async () =>
      (await view('inbox')).find((r) => r.verb === 'mention' && r.lastActionId === mentionId),
    );
    const lag = performance.now() - ackedAt;
    const comment = await record(recordOf(muted));
    expectThat(comment?.actorsCount === 1, `the comment half was not muted: ${JSON.stringify(comment)}`);
    return `"${mention.description}" in the inbox ${lag.toFixed(0)} ms after the ack; the post's comment record still counts 1`;
  });

  await step('archive all read (POST /v3/records/archive {"all": true, "readOnly": true})', async () => {
    const { totalUnreadCount } = await counts();
    const answer = await api.call('POST', '/notifications/v3/records/archive', { all: true, readOnly: true });
    expectThat(answer.status === 200, `answered ${answer.status} ${JSON.stringify(answer.body)}`);
    const updated = (answer.body.data as { updated: number }).updated;
    expectThat(updated === 1, `updated ${updated}, expected the 1 read record`);
    const [inbox, archived] = [await view('inbox'), await view('archived')];
    expectThat(!inbox.some((r) => r.v_tarid_uid === recordOf(read)), 'the read record is still in the inbox');
    expectThat(
      archived.length === 1 && archived[0]?.v_tarid_uid === recordOf(read) && archived[0].archivedAt !== null,
      `the archived view holds ${JSON.stringify(archived.map((r) => r.v_tarid_uid))}`,
    );
    const after = await counts();
    expectThat(
      after.totalUnreadCount === totalUnreadCount,
      'the unread count moved: the record archived was read',
    );
    return `updated 1 in ${answer.ms.toFixed(1)} ms; inbox ${inbox.length}, archived 1, counts ${JSON.stringify(after)}`;
  });

  const page = await openDemoPage(stack.tray, api.token);
  try {
    const snoozed = mention?.v_tarid_uid ?? '';
    await step('demo page: the inbox, then "Mark all seen" takes the unseen badge to 0', async () => {
      await page.shown(snoozed, 5_000);
      const { totalUnreadCount } = await counts();
      await page.badge('badge', totalUnreadCount, 5_000);
      await page.clickMarkAllSeen();
      await page.badge('unseen', 0, 5_000);
      return `unread badge ${totalUnreadCount}, unseen badge 0`;
    });

    await step(
      'snooze a record for 5 s: it leaves the page and comes back live, unread and unseen',
      async () => {
        const until = Date.now() + 5_000;
        const answer = await api.call('POST', '/notifications/v3/records/snooze', { ids: [snoozed], until });
        expectThat(answer.status === 200, `answered ${answer.status} ${JSON.stringify(answer.body)}`);
        await page.gone(snoozed, 3_000);
        const left = Date.now();
        const listed = (await view('snoozed')).find((r) => r.v_tarid_uid === snoozed);
        expectThat(listed?.snoozedUntil === until, `the snoozed view shows ${JSON.stringify(listed)}`);
        await page.shown(snoozed, 10_000);
        const back = Date.now() - until;
        expectThat(back >= 0, `back ${-back} ms before its until`);
        expectThat(back <= 1_000, `back ${back} ms after its until (the contract asks 1 s)`);
        const classes = await page.classes(snoozed);
        expectThat(classes.includes('unread') && classes.includes('unseen'), `back as ${classes.join(' ')}`);
        await page.badge('unseen', 1, 2_000);
        return `left the page ${left - (until - 5_000)} ms after the call; back ${back} ms after its until, unread and unseen; unseen badge 1`;
      },
    );

    await step('delete a comment: the group shrinks (API and demo page)', async () => {
      const key = recordOf(grouped);
      const group = await record(key);
      expectThat(group?.actorsCount === 3, `the group counts ${group?.actorsCount}`);
      await page.described(key, group.description, 5_000);
      const { ackedAt } = await send(
        commentDeleteBody(grouped, { commentId: cm('g-2'), author: dee }, Date.now()),
      );
      const shrunk = await waitFor('the shrunk record', async () => {
        const now = await record(key);
        return now?.actorsCount === 2 ? now : undefined;
      });
      const lag = performance.now() - ackedAt;
      expectThat(
        shrunk.lastUpdate === group.lastUpdate && shrunk.hasRead === group.hasRead,
        `a removal moved the record or its read state: ${JSON.stringify(shrunk)}`,
      );
      const names = shrunk.actors.map((a) => a.name).join(', ');
      expectThat(names === 'Cid, Ben', `actors ${names}`);
      await page.described(key, shrunk.description, 2_000);
      return `"${group.description}" -> "${shrunk.description}" ${lag.toFixed(0)} ms after the ack, on the page too; lastUpdate kept`;
    });
  } finally {
    await page.close();
  }

  await step('unmute (DELETE /v3/mutes?targetType=post&targetId=...)', async () => {
    const answer = await api.call(
      'DELETE',
      `/notifications/v3/mutes?targetType=post&targetId=${muted.postId}`,
    );
    expectThat(
      answer.status === 200 && (answer.body.data as { removed: boolean }).removed,
      `answered ${answer.status} ${JSON.stringify(answer.body)}`,
    );
    const list = await api.call('GET', '/notifications/v3/mutes');
    expectThat((list.body.data as unknown[]).length === 0, `mutes left: ${JSON.stringify(list.body.data)}`);
    return `removed: true; no mute left`;
  });
  if (api.rateLimited() > 0) process.stdout.write(`  (${api.rateLimited()} calls waited out a 429)\n`);
}
