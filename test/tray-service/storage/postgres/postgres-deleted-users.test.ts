import { expect } from 'chai';
import pg from 'pg';
import { DeletedUserError } from '../../../../tray-service/domain/deleted-user-error.ts';
import { createPostgresDeletedUsers } from '../../../../tray-service/storage/postgres/postgres-deleted-users.ts';
import { createPostgresInbox } from '../../../../tray-service/storage/postgres/postgres-inbox.ts';
import { createPostgresLatestTimes } from '../../../../tray-service/storage/postgres/postgres-latest-times.ts';
import { markLastRead } from '../../../../tray-service/use-cases/last-read.ts';
import { putMute } from '../../../../tray-service/use-cases/put-mute.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { at, comment, NOW, RETENTION_DAYS, useTray } from './tray-fixture.ts';

// A mute or a last-read time written while a deletion's transaction runs reads the profile as it
// was (the deletion not yet committed), so its own check lets it through: the deletion must then
// remove it, which it can only do after its commit (a delete inside the transaction runs before
// the write and does not see it).
describe('storage/postgres deleted users: state written while the deletion runs', () => {
  const tray = useTray();

  it('is removed by the deletion once it commits: a mute and a last-read time put meanwhile', async () => {
    const pool = tray.pg.pool;
    const storage = {
      engine: 'postgres' as const,
      inbox: createPostgresInbox(pool),
      deletedUsers: createPostgresDeletedUsers(pool),
      lastRead: createPostgresLatestTimes(pool, 'tray_last_read'),
    };
    // Ben commented: the deletion rewrites his snapshot in tray_target_actors, inside its transaction.
    await tray.writes.applyPersonal([comment('p-1', 'u-ben', 1)], tray.context());
    const holder = new pg.Client({ connectionString: tray.pg.url });
    await holder.connect();
    try {
      // Holds Ben's group actor row, so the deletion stops inside its transaction, after it stored
      // the profile and deleted the tray (not yet committed).
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM tray_target_actors WHERE actor_id = 'u-ben' FOR UPDATE");
      const deleting = tray.writes.applyProfiles(
        [{ userId: 'u-ben', displayName: 'Deleted user', deleted: true, at: at(5) }],
        tray.context(),
      );
      await waitFor(
        async () =>
          (
            await pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE tray_target_actors%'`,
            )
          ).rowCount === 1,
        5_000,
        'the deletion to stop at the held row',
      );
      const target = { targetType: 'post', targetId: 'p-9' } as const;
      // Neither sees the deletion, which has not committed.
      await putMute(storage, {
        userId: 'u-ben',
        target,
        until: null,
        now: NOW,
        retentionDays: RETENTION_DAYS,
      });
      await markLastRead(storage, undefined, 'u-ben', NOW);
      await holder.query('ROLLBACK');
      await deleting;
      expect(await storage.inbox.mutesInForce('u-ben', NOW + 1)).to.deep.equal([]);
      expect(await storage.lastRead.latest('u-ben')).to.equal(0);
      // And from now on they are refused.
      await expect(
        putMute(storage, {
          userId: 'u-ben',
          target,
          until: null,
          now: NOW + 2,
          retentionDays: RETENTION_DAYS,
        }),
      ).to.be.rejectedWith(DeletedUserError);
    } finally {
      await holder.end();
    }
  });
});
