import { expect } from 'chai';
import pg from 'pg';
import type { MuteTarget } from '../../../../tray-service/domain/mute-changes.ts';
import { createPostgresMutes } from '../../../../tray-service/storage/postgres/postgres-mutes.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { NOW, RETENTION_DAYS, useTray } from './tray-fixture.ts';
import { expectKeptSpansLeftOutOfUserLimit } from '../kept-spans-user-limit.ts';

// What only PostgreSQL shows of mutes (their behaviour is in the storage conformance suite): an
// interleaving of a PUT and a DELETE of one mute that the conformance case's race rarely hits,
// made certain with a row lock held from another connection.
describe('storage/postgres mutes', () => {
  const tray = useTray();
  const target: MuteTarget = { targetType: 'post', targetId: 'p-1' };

  /** The connections of this database waiting for a lock (a row's, or an advisory one). */
  const waitingForLocks = async () =>
    (
      await tray.pg.pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      )
    ).rowCount ?? 0;

  it('a PUT that starts while a DELETE of its mute is ending the span is not refused for the span ending', async () => {
    const mutes = createPostgresMutes(tray.pg.pool);
    const user = 'u-race-at-limit';
    // The limit is one and the raced mute is the user's one mute in force.
    await mutes.putMute(user, target, null, NOW, RETENTION_DAYS, 1);
    const holder = new pg.Client({ connectionString: tray.pg.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM tray_mutes WHERE user_id = $1 FOR UPDATE', [user]);
      // The DELETE waits at the span's row; the PUT then starts and waits too, behind it.
      const removing = mutes.removeMute(user, target, NOW + 9, RETENTION_DAYS);
      await waitFor(async () => (await waitingForLocks()) === 1, 5_000, 'the DELETE to wait for the row');
      const putting = mutes.putMute(user, target, null, NOW + 10, RETENTION_DAYS, 1);
      await waitFor(async () => (await waitingForLocks()) === 2, 5_000, 'the PUT to wait too');
      await holder.query('COMMIT');
      // The DELETE came first: it ends the span, and the PUT, with no mute in force, starts one.
      // (The PUT first, ending nothing, would have kept the span and the DELETE ended it.)
      expect(await removing).to.equal(true);
      const mute = { userId: user, ...target, createdAt: NOW + 10, until: null, removedAt: null };
      expect(await putting).to.deep.equal(mute);
      expect(await mutes.mutesInForce(user, NOW + 10)).to.deep.equal([mute]);
    } finally {
      await holder.end();
    }
  });

  // The purge keeps an ended span past its retention while a record of its owner counts from before
  // its end, by moving its expiry to that record's: the user limit read that expiry, so such spans
  // counted for good and the user's PUTs were refused, where only spans in force or ended within
  // the retention count.
  it('counts a span the purge keeps past its retention (its expiry moved) as ended, not toward the user limit', async () => {
    // What the purge does to spans a record of the user still needs.
    await expectKeptSpansLeftOutOfUserLimit(
      createPostgresMutes(tray.pg.pool),
      async (userId, expiresAt) =>
        void (await tray.pg.pool.query('UPDATE tray_mutes SET expires_at = $2 WHERE user_id = $1', [
          userId,
          expiresAt,
        ])),
      NOW,
      RETENTION_DAYS,
    );
  });
});
