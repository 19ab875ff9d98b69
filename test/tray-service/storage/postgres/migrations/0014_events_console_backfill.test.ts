import { expect } from 'chai';
import { mapEvent } from '../../../../../tray-service/domain/map-event.ts';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import { schemaBefore } from './schema-before.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';
import {
  commentDeleteEvent,
  commentEvent,
  membershipEvent,
  postDeleteEvent,
  postEvent,
  reactionEvent,
  reactionRemoveEvent,
  userDeleteEvent,
  userUpdateEvent,
  type TestEnvelope,
} from '../../../worker/event-builder.ts';

const MINUTE_MS = 60_000;
/** A whole minute an hour ago: the events are unexpired. */
const t0 = Math.floor((Date.now() - 3_600_000) / MINUTE_MS) * MINUTE_MS;

/** Events as a release before the events console stored them (schema version 3), one per name the mapping gives a subject. */
const stored: { key: string; envelope: TestEnvelope; status?: string; at?: number }[] = [
  { key: 'ev-post', envelope: postEvent({ author: 'u-spam', communityId: 'c-1' }) },
  { key: 'ev-post-user-feed', envelope: postEvent({ author: 'u-2', feed: 'user', feedOwner: 'u-2' }) },
  { key: 'ev-comment', envelope: commentEvent({ author: 'u-3' }) },
  { key: 'ev-reaction', envelope: reactionEvent({ author: 'u-4' }) },
  { key: 'ev-post-delete', envelope: postDeleteEvent({ author: 'u-5' }) },
  { key: 'ev-comment-delete', envelope: commentDeleteEvent({ author: 'u-6' }) },
  { key: 'ev-reaction-remove', envelope: reactionRemoveEvent() },
  { key: 'ev-join', envelope: membershipEvent('join', ['u-7'], 'c-2') },
  { key: 'ev-leave-two', envelope: membershipEvent('leave', ['u-7', 'u-8'], 'c-2') },
  { key: 'ev-update', envelope: userUpdateEvent({ userId: 'u-9' }) },
  { key: 'ev-delete', envelope: userDeleteEvent('u-10') },
  {
    key: 'ev-ban',
    envelope: {
      event: 'user.didGlobalBan',
      data: { userIds: ['u-11', 'u-11'], createdAt: new Date(t0).toISOString() },
    },
  },
  { key: 'ev-unknown', envelope: { event: 'channel.didCreate', data: { userId: 'u-12' } }, status: 'stored' },
  { key: 'ev-invalid', envelope: { event: 'post.didCreate', data: { post: {} } }, status: 'invalid' },
  // The next minute: its own count.
  { key: 'ev-later', envelope: postEvent({ author: 'u-13' }), at: t0 + MINUTE_MS + 5 },
];

describe('storage/postgres migration 0014 (events stored before the events console)', () => {
  const pg = usePostgres();

  it('gives them their moderation outcome, acting user and community, and counts them into the per-minute chart', async function () {
    this.timeout(60_000);
    await schemaBefore(pg.pool, 4);
    for (const { key, envelope, status, at } of stored)
      await pg.pool.query(
        `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status)
         VALUES ($1, $2, 'main', $3, $4, $4, $5, $6)`,
        [
          key,
          envelope.event,
          JSON.stringify(envelope.data),
          new Date(at ?? t0 + 10),
          new Date((at ?? t0) + 30 * DAY_MS),
          status ?? 'applied',
        ],
      );
    // An expired event is neither filtered nor charted: left as it is.
    await pg.pool.query(
      `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status)
       VALUES ('ev-expired', 'post.didCreate', 'main', $1, $2, $2, $2, 'applied')`,
      [JSON.stringify(postEvent({ author: 'u-old' }).data), new Date(t0 - 40 * DAY_MS)],
    );
    const decisions: [string, string, string, number][] = [
      ['d1', 'ev-post', 'flag', t0 + 10],
      ['d2', 'ev-comment', 'flag', t0 + 10],
      ['d3', 'ev-comment', 'ban-request', t0 + 10],
      // About an earlier delivery of the same key, which expired before this one was stored.
      ['d4', 'ev-update', 'flag', t0 - 31 * DAY_MS],
    ];
    for (const [id, eventKey, action, at] of decisions)
      await pg.pool.query(
        `INSERT INTO moderation_decisions (id, event_key, event, event_received_at, rule, action, reason,
           subject_type, subject_id, user_id, decided_at, delivery, delivery_attempts)
         VALUES ($1, $2, 'post.didCreate', $3, 'blocked-words', $4, 'r', 'post', 'p', 'u-spam', $3, 'off', 0)`,
        [id, eventKey, new Date(at), action],
      );

    expect(await migrate(pg.pool)).to.include(14);

    const { rows } = await pg.pool.query<{
      key: string;
      moderation: string;
      user_id: string | null;
      community_id: string | null;
    }>('SELECT key, moderation, user_id, community_id FROM stored_events ORDER BY key');
    const moderation: Record<string, string> = { 'ev-post': 'flag', 'ev-comment': 'ban-request' };
    expect(rows).to.deep.equal(
      [
        ...stored.map(({ key, envelope }) => {
          const { status, subject } = mapEvent({ ...envelope, receivedAt: t0 });
          if (!key.startsWith('ev-unknown') && !key.startsWith('ev-invalid'))
            expect(status, `${key} is a valid event`).to.equal('applied');
          return {
            key,
            moderation: moderation[key] ?? 'none',
            user_id: subject?.userId ?? null,
            community_id: subject?.communityId ?? null,
          };
        }),
        { key: 'ev-expired', moderation: 'none', user_id: null, community_id: null },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
    // Each case the mapping tells apart is there: a community, none, one user of several, none of two.
    expect(rows.find((row) => row.key === 'ev-post')).to.include({ user_id: 'u-spam', community_id: 'c-1' });
    expect(rows.find((row) => row.key === 'ev-post-user-feed')).to.include({ community_id: null });
    expect(rows.find((row) => row.key === 'ev-ban')).to.include({ user_id: 'u-11' });
    expect(rows.find((row) => row.key === 'ev-leave-two')).to.include({ user_id: null, community_id: 'c-2' });

    const minutes = await pg.pool.query<{ minute: Date; counts: Record<string, number>; expires_at: Date }>(
      'SELECT minute, counts, expires_at FROM stored_event_minutes ORDER BY minute',
    );
    const names = (from: number, to: number) => {
      const counts: Record<string, number> = {};
      for (const { envelope } of stored.slice(from, to))
        counts[envelope.event] = (counts[envelope.event] ?? 0) + 1;
      return counts;
    };
    expect(minutes.rows).to.deep.equal([
      { minute: new Date(t0), counts: names(0, -1), expires_at: new Date(t0 + 30 * DAY_MS) },
      {
        minute: new Date(t0 + MINUTE_MS),
        counts: { 'post.didCreate': 1 },
        expires_at: new Date(t0 + MINUTE_MS + 5 + 30 * DAY_MS),
      },
    ]);
  });
});
