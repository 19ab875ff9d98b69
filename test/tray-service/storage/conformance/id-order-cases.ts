import { expect } from 'chai';
import { aReaction } from '../../../support/activity-builder.ts';
import { at, keysOf, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage } from './modelled-storage.ts';
import { removalOperation } from './removal-operation.ts';

// Ids are ordered by code point (UTF-8 bytes) wherever a tie in time needs an order: the newest of
// two actions at the same time, and records of equal lastUpdate on a page. "😀" (U+1F600, two UTF-16
// units from 0xD83D) comes after "！" (U+FF01) by code point, before it by UTF-16 unit, so these
// ids tell the two orders apart; ASCII ids cannot.
const ASTRAL = '😀';
const HIGH_BMP = '！';

/** Reactions by Ben and Cy on Ana's post at the same minute, ids differing only in those characters. */
function tiedReactions(context: ConformanceContext, owner: string, post: string) {
  const target = { postId: context.id(post), owner: context.id(owner) };
  return {
    astral: aReaction(context.id('u-ben'), target, { id: context.id(`r${ASTRAL}-${post}`), at: at(5) }),
    highBmp: aReaction(context.id('u-cy'), target, { id: context.id(`r${HIGH_BMP}-${post}`), at: at(5) }),
    older: aReaction(context.id('u-dee'), target, { id: context.id(`r-old-${post}`), at: at(1) }),
  };
}

conformanceCase(
  'id order: of two actions at the same time, the newest is the later id by code point, whatever the delivery',
  async (context) => {
    const tray = modelledStorage(context);
    const deliveries = {
      'u-ana': (r: ReturnType<typeof tiedReactions>) => [[r.older], [r.astral], [r.highBmp]],
      'u-eve': (r: ReturnType<typeof tiedReactions>) => [[r.older], [r.highBmp], [r.astral]],
      'u-fay': (r: ReturnType<typeof tiedReactions>) => [[r.older, r.highBmp, r.astral]],
    };
    for (const [owner, order] of Object.entries(deliveries)) {
      const reactions = tiedReactions(context, owner, `p-${owner}`);
      for (const [n, batch] of order(reactions).entries()) await tray.personal(batch, NOW + n);
      const record = await tray.record(owner, 'reaction', NOW + 3);
      expect(record?.lastActionId, owner).to.equal(reactions.astral.lastActionId);
      expect(
        record?.actors.map((actor) => actor.userId),
        owner,
      ).to.deep.equal([context.id('u-ben'), context.id('u-cy'), context.id('u-dee')]);
      await tray.expectModel(owner, NOW + 3);
    }
    // A removal computes the record again from its kept actions: the same newest, the same order.
    await tray.apply(
      removalOperation(context, { kind: 'reaction', id: 'r-old-p-u-ana', post: 'p-u-ana', at: NOW + 4 }),
    );
    const shrunk = await tray.record('u-ana', 'reaction', NOW + 4);
    expect(shrunk?.lastActionId).to.equal(context.id(`r${ASTRAL}-p-u-ana`));
    expect(shrunk?.actors.map((actor) => actor.userId)).to.deep.equal([
      context.id('u-ben'),
      context.id('u-cy'),
    ]);
    await tray.expectModel('u-ana', NOW + 4);
  },
  { needs: 'removals' },
);

conformanceCase(
  'id order: records of equal lastUpdate are paged by key descending in code point order',
  async (context) => {
    const tray = modelledStorage(context);
    const owner = context.id('u-ana');
    await tray.personal([
      aReaction(
        context.id('u-ben'),
        { postId: context.id(`p${HIGH_BMP}`), owner },
        { id: context.id('r-1'), at: at(2) },
      ),
      aReaction(
        context.id('u-ben'),
        { postId: context.id(`p${ASTRAL}`), owner },
        { id: context.id('r-2'), at: at(2) },
      ),
    ]);
    const records = await tray.records('u-ana');
    expect(records.map((record) => record.targetId)).to.deep.equal([
      context.id(`p${ASTRAL}`),
      context.id(`p${HIGH_BMP}`),
    ]);
    const first = await context.storage.records.pageAfter(owner, undefined, 1, NOW);
    expect(keysOf(first.records)).to.deep.equal(keysOf(records));
    await tray.expectModel('u-ana');
  },
);
