import { expect } from 'chai';
import { conformanceCase } from './conformance-case.ts';

/** The legacy block list (BlockListPort). */
conformanceCase(
  'block list: block and unblock are idempotent; pages run in blocked-user order',
  async ({ storage, id }) => {
    const owner = id('u-ana');
    const blocked = ['u-Zed', 'u-bo', 'u_cy', 'u-al', 'u-dee'].map(id);
    for (const userId of blocked) await storage.blockList.block(owner, userId);
    await storage.blockList.block(owner, blocked[0] as string);
    await storage.blockList.unblock(owner, blocked[4] as string);
    await storage.blockList.unblock(owner, id('u-never'));
    const expected = blocked.slice(0, 4).sort();
    const first = await storage.blockList.page(owner, undefined, 3);
    expect(first.results).to.deep.equal(
      expected.slice(0, 3).map((userId) => ({ netid_uid: owner, blocked_userId: userId })),
    );
    expect(first.paginationToken).to.deep.equal({ netid_uid: owner, blocked_userId: expected[2] });
    const second = await storage.blockList.page(owner, first.paginationToken?.blocked_userId, 3);
    expect(second).to.deep.equal({
      results: [{ netid_uid: owner, blocked_userId: expected[3] }],
      paginationToken: null,
    });
    expect(await storage.blockList.page(id('u-other'), undefined, 3)).to.deep.equal({
      results: [],
      paginationToken: null,
    });
  },
);

conformanceCase(
  'block list: blockedAmong names which of the given users the owner blocked',
  async ({ storage, id }) => {
    const owner = id('u-ana');
    await storage.blockList.block(owner, id('u-ben'));
    await storage.blockList.block(id('u-other'), id('u-cid'));
    expect([
      ...(await storage.blockList.blockedAmong(owner, [id('u-ben'), id('u-cid'), id('u-dee')])),
    ]).to.deep.equal([id('u-ben')]);
    expect((await storage.blockList.blockedAmong(owner, [])).size).to.equal(0);
  },
);

conformanceCase(
  'block list: forget removes every entry of one owner, and no other owner’s',
  async ({ storage, id }) => {
    const [ana, ben] = [id('u-ana'), id('u-ben')];
    for (const blocked of ['u-1', 'u-2', 'u-3'].map(id)) await storage.blockList.block(ana, blocked);
    await storage.blockList.block(ben, ana);
    await storage.blockList.forget(ana);
    await storage.blockList.forget(id('u-never'));
    expect(await storage.blockList.page(ana, undefined, 20)).to.deep.equal({
      results: [],
      paginationToken: null,
    });
    expect((await storage.blockList.page(ben, undefined, 20)).results).to.deep.equal([
      { netid_uid: ben, blocked_userId: ana },
    ]);
    // Blocking again after it works as before.
    await storage.blockList.block(ana, id('u-1'));
    expect([...(await storage.blockList.blockedAmong(ana, [id('u-1'), id('u-2')]))]).to.deep.equal([
      id('u-1'),
    ]);
  },
);

conformanceCase(
  'block list: at most maxEntries entries; blocks at once from two processes never take an owner past it',
  async (context) => {
    const { storage, id } = context;
    const peer = await context.peer();
    const owner = id('u-ana');
    // A small limit of the port's own, so the race is over a few places, not thousands of entries.
    const LIMIT = 3;
    const listed = async () =>
      (await storage.blockList.page(owner, undefined, 20)).results.map((entry) => entry.blocked_userId);

    expect(await storage.blockList.block(owner, id('u-first'), LIMIT)).to.equal('blocked');
    const racing = Array.from({ length: 12 }, (_, n) => id(`u-race-${n}`));
    const outcomes = await Promise.all(
      racing.map((blocked, n) => (n % 2 === 0 ? storage : peer).blockList.block(owner, blocked, LIMIT)),
    );
    expect(outcomes.filter((outcome) => outcome === 'full')).to.have.length(racing.length - (LIMIT - 1));
    const won = racing.filter((_, n) => outcomes[n] === 'blocked');
    expect(await listed()).to.have.members([id('u-first'), ...won]);

    // Full: blocking someone already blocked still answers blocked; a new one changes nothing...
    expect(await peer.blockList.block(owner, id('u-first'), LIMIT)).to.equal('blocked');
    expect(await storage.blockList.block(owner, id('u-late'), LIMIT)).to.equal('full');
    expect(await listed()).to.have.members([id('u-first'), ...won]);
    // ...until one is unblocked; another owner's list is its own, and no limit means none.
    await storage.blockList.unblock(owner, id('u-first'));
    expect(await peer.blockList.block(owner, id('u-late'), LIMIT)).to.equal('blocked');
    expect(await listed()).to.have.members([...won, id('u-late')]);
    expect(await storage.blockList.block(id('u-ben'), id('u-late'), LIMIT)).to.equal('blocked');
    expect(await storage.blockList.block(owner, id('u-more'))).to.equal('blocked');
    expect(await listed()).to.have.length(LIMIT + 1);
  },
);
