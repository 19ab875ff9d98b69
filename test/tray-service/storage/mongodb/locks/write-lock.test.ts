import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { TRAY_WRITE_LOCKS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { DEFAULT_TIMEOUT_MS } from '../../../../../client/src/create-tray-client.ts';
import {
  blockListLockId,
  WRITE_LOCK_TAKEOVER_MS,
  WRITE_LOCK_WAIT_MS,
  muteLockId,
  withWriteLock,
} from '../../../../../tray-service/storage/mongodb/locks/write-lock.ts';
import { StorageBusyError } from '../../../../../tray-service/storage/storage-busy-error.ts';
import type { WriteLockDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-write-locks-collection.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

describe('withWriteLock (MongoDB adapter: one write of a user’s mutes, or of an owner’s block list, at a time)', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  const locks = () => mongo.db.collection<WriteLockDoc>(TRAY_WRITE_LOCKS);

  it('runs one holder at a time per user and leaves no lock behind', async () => {
    let holding = 0;
    let most = 0;
    const work = async () => {
      holding += 1;
      most = Math.max(most, holding);
      await sleep(5);
      holding -= 1;
    };
    await Promise.all(Array.from({ length: 8 }, () => withWriteLock(mongo.db, muteLockId('u-one'), work)));
    expect(most).to.equal(1);
    expect(await locks().countDocuments({})).to.equal(0);
  });

  it('does not hold one user up behind another, nor a user’s block list behind their mutes', async () => {
    let released = false;
    let entered!: () => void;
    const slowHolds = new Promise<void>((resolve) => (entered = resolve));
    const other = withWriteLock(mongo.db, muteLockId('u-slow'), async () => {
      entered();
      while (!released) await sleep(5);
    });
    try {
      await slowHolds;
      // Both locks held at once, each under its own user's id.
      const quick = withWriteLock(mongo.db, muteLockId('u-quick'), async () =>
        (await locks().find({}).toArray()).map((lock) => lock._id).sort(),
      );
      const held = await Promise.race([quick, sleep(5_000).then(() => 'waited behind u-slow')]);
      expect(held).to.deep.equal([muteLockId('u-quick'), muteLockId('u-slow')].sort());
      const blocking = withWriteLock(mongo.db, blockListLockId('u-slow'), async () => 'blocked');
      expect(await Promise.race([blocking, sleep(5_000).then(() => 'waited behind the mutes')])).to.equal(
        'blocked',
      );
    } finally {
      released = true;
      await other;
    }
  });

  it('releases the lock when the work fails', async () => {
    await expect(
      withWriteLock(mongo.db, muteLockId('u-fails'), () => Promise.reject(new Error('boom'))),
    ).to.be.rejectedWith('boom');
    expect(await locks().countDocuments({ _id: muteLockId('u-fails') })).to.equal(0);
  });

  it('gives up with StorageBusyError (a 503) when the holder keeps it, and leaves its lock alone', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    await locks().insertOne({ _id: muteLockId('u-held'), token: 'alive', expiresAt });
    let ran = false;
    await expect(
      withWriteLock(
        mongo.db,
        muteLockId('u-held'),
        async () => {
          ran = true;
        },
        200,
      ),
    ).to.be.rejectedWith(StorageBusyError, 'u-held');
    expect(ran).to.equal(false);
    expect(await locks().findOne({ _id: muteLockId('u-held') })).to.deep.include({ token: 'alive' });
  });

  it('gives up before the client stops waiting, and not before a dead holder can be taken over', () => {
    // A waiter past the client's own timeout would answer 503, which the client retries, to a
    // caller already gone with a TimeoutError, which it does not.
    expect(WRITE_LOCK_WAIT_MS).to.be.below(DEFAULT_TIMEOUT_MS);
    expect(WRITE_LOCK_WAIT_MS).to.be.above(WRITE_LOCK_TAKEOVER_MS);
  });

  it('takes over a lock whose holder died (past its expiresAt)', async () => {
    await locks().insertOne({
      _id: muteLockId('u-orphan'),
      token: 'dead',
      expiresAt: new Date(Date.now() - 1),
    });
    expect(await withWriteLock(mongo.db, muteLockId('u-orphan'), () => Promise.resolve('ran'))).to.equal(
      'ran',
    );
    expect(await locks().countDocuments({ _id: muteLockId('u-orphan') })).to.equal(0);
  });
});
