import { expect } from 'chai';
import { commentEvent, minute, postEvent, reactionEvent } from './event-builder.ts';
import { useWorker } from './worker-harness.ts';

// docs/contract.md#tray-records: a record is one (verb, target, recipient). Ids may contain `_`,
// so two users' records whose parts joined with `_` read the same must still be two records.
describe('tray worker: users whose ids share a prefix', () => {
  const worker = useWorker();
  const summary = async (userId: string) =>
    (await worker.records(userId)).map((record) => ({
      userId: record.userId,
      verb: record.verb,
      targetId: record.targetId,
      actors: record.actors.map((actor) => actor.userId),
    }));

  it('keeps the comment records of alice_smith on p1 and smith on p1_alice apart', async () => {
    await worker.deliver(
      commentEvent({ postId: 'p1', postOwner: 'alice_smith', author: 'u-cid', createdAt: minute(1) }),
    );
    await worker.deliver(
      commentEvent({ postId: 'p1_alice', postOwner: 'smith', author: 'u-dee', createdAt: minute(2) }),
    );
    expect(await summary('alice_smith')).to.deep.equal([
      { userId: 'alice_smith', verb: 'comment', targetId: 'p1', actors: ['u-cid'] },
    ]);
    expect(await summary('smith')).to.deep.equal([
      { userId: 'smith', verb: 'comment', targetId: 'p1_alice', actors: ['u-dee'] },
    ]);
  });

  it('keeps the reaction records of a_b on p_1 and b on p_1_a apart, whichever comes first', async () => {
    await worker.deliver(
      reactionEvent({ postId: 'p_1_a', postOwner: 'b', author: 'u-eve', createdAt: minute(3) }),
    );
    await worker.deliver(
      reactionEvent({ postId: 'p_1', postOwner: 'a_b', author: 'u-fay', createdAt: minute(4) }),
    );
    expect(await summary('a_b')).to.deep.equal([
      { userId: 'a_b', verb: 'reaction', targetId: 'p_1', actors: ['u-fay'] },
    ]);
    expect(await summary('b')).to.deep.equal([
      { userId: 'b', verb: 'reaction', targetId: 'p_1_a', actors: ['u-eve'] },
    ]);
  });

  it('keeps the mention records of x_y in c_1 and y in c_1_x apart', async () => {
    await worker.deliver(
      postEvent({ postId: 'c_1', author: 'u-gus', mentions: ['x_y'], createdAt: minute(5) }),
    );
    await worker.deliver(
      postEvent({ postId: 'c_1_x', author: 'u-hal', mentions: ['y'], createdAt: minute(6) }),
    );
    expect(await summary('x_y')).to.deep.equal([
      { userId: 'x_y', verb: 'mention', targetId: 'c_1', actors: ['u-gus'] },
    ]);
    expect(await summary('y')).to.deep.equal([
      { userId: 'y', verb: 'mention', targetId: 'c_1_x', actors: ['u-hal'] },
    ]);
  });
});
