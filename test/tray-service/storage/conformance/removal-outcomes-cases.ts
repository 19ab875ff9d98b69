import { expect } from 'chai';
import type { Removal } from '../../../../tray-service/domain/removal.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage } from './modelled-storage.ts';

// What a removal event changed (docs/operations.md#what-a-removal-changed): recorded by the
// adapter in the write that applies the removal, under the event's key, and read back by the
// admin API through storage.removalOutcomes.

/** Applies `removal` as the worker does for the stored event `eventKey`. */
async function applyAs(context: ConformanceContext, eventKey: string, removal: Removal, now: number) {
  const apply = context.storage.writes.applyRemovals;
  if (!apply) throw new Error('this adapter has no removals');
  await apply([removal], { ...context.write(now), eventKey: context.id(eventKey) });
}

function outcomes(context: ConformanceContext) {
  const port = context.storage.removalOutcomes;
  if (!port) throw new Error('this adapter records no removal outcomes');
  return {
    outcome: (eventKey: string) => port.outcome(context.id(eventKey)),
    all: async (eventKey: string) => (await port.changes(context.id(eventKey), 100)).items,
    port,
  };
}

const comment = (context: ConformanceContext, id: string): Removal => ({
  kind: 'comment',
  id: context.id(id),
  postId: context.id('p-1'),
  at: NOW,
});

const countsOf = (record: TrayRecord) => ({
  actorsCount: record.actorsCount,
  actorIds: record.actors.map((actor) => actor.userId),
  lastActionId: record.lastActionId,
});

conformanceCase(
  'removal outcomes: a record that shrank and one removed, each with its counts before and after; a redelivery adds nothing',
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    const post = { postId: id('p-1'), owner: id('u-ana') };
    await tray.personal(
      (
        [
          ['u-ben', 1],
          ['u-cy', 2],
          ['u-dee', 3],
        ] as const
      ).map(([actor, minute]) => aComment(id(actor), post, { id: id(`cm-${actor}`), at: at(minute) })),
    );
    const before = await tray.record('u-ana', 'comment', NOW);
    if (!before) throw new Error('no comment record');
    await applyAs(context, 'e-dee', comment(context, 'cm-u-dee'), NOW + 1);
    const after = await tray.record('u-ana', 'comment', NOW + 1);
    if (!after) throw new Error('the record went');
    const read = outcomes(context);
    expect(await read.outcome('e-dee')).to.deep.equal({
      voided: 1,
      shrunk: 1,
      replaced: 0,
      removed: 0,
      listed: 1,
    });
    expect(await read.all('e-dee')).to.deep.equal([
      {
        userId: id('u-ana'),
        key: before.key,
        change: 'shrunk',
        before: countsOf(before),
        after: countsOf(after),
      },
    ]);
    expect(countsOf(after)).to.deep.equal({
      actorsCount: 2,
      actorIds: [id('u-cy'), id('u-ben')],
      lastActionId: id('cm-u-cy'),
    });

    // The same event again (a retried or replayed job): nothing left to take out, nothing added.
    await applyAs(context, 'e-dee', comment(context, 'cm-u-dee'), NOW + 2);
    expect(await read.outcome('e-dee')).to.deep.equal({
      voided: 1,
      shrunk: 1,
      replaced: 0,
      removed: 0,
      listed: 1,
    });
    expect(await read.all('e-dee')).to.have.length(1);

    await applyAs(context, 'e-cy', comment(context, 'cm-u-cy'), NOW + 3);
    const last = await tray.record('u-ana', 'comment', NOW + 3);
    await applyAs(context, 'e-ben', comment(context, 'cm-u-ben'), NOW + 4);
    expect(await tray.record('u-ana', 'comment', NOW + 4)).to.equal(undefined);
    expect(await read.outcome('e-ben')).to.deep.equal({
      voided: 1,
      shrunk: 0,
      replaced: 0,
      removed: 1,
      listed: 1,
    });
    expect(await read.all('e-ben')).to.deep.equal([
      { userId: id('u-ana'), key: before.key, change: 'removed', before: last && countsOf(last) },
    ]);
  },
  { needs: 'removals' },
);

conformanceCase(
  'removal outcomes: a removal arriving before its action records that it changed nothing, and the action arriving later leaves it so',
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    await applyAs(context, 'e-early', comment(context, 'cm-late'), NOW);
    const read = outcomes(context);
    const nothing = { voided: 0, shrunk: 0, replaced: 0, removed: 0, listed: 0 };
    expect(await read.outcome('e-early')).to.deep.equal(nothing);
    // Straight to storage: the reference tray is not told of removals applied outside it.
    await context.storage.writes.applyPersonal(
      [aComment(id('u-ben'), { postId: id('p-1'), owner: id('u-ana') }, { id: id('cm-late'), at: at(1) })],
      context.write(NOW + 1),
    );
    expect(await tray.records('u-ana', NOW + 1)).to.deep.equal([]);
    expect(await read.outcome('e-early')).to.deep.equal(nothing);
    expect(await read.all('e-early')).to.deep.equal([]);
    expect(await read.outcome('e-never-applied')).to.equal(undefined);
  },
  { needs: 'removals' },
);

conformanceCase(
  "removal outcomes: a deleted post counts every member's record it changed and pages them in (user, key) order",
  async (context) => {
    const tray = modelledStorage(context);
    const id = context.id;
    const members = ['u-m1', 'u-m2', 'u-m3', 'u-m4', 'u-m5'];
    for (const member of members) await tray.membership(member, true, 0);
    const community = { communityId: tray.communityId };
    await tray.posts([
      aPost(id('u-cy'), { id: id('p-0'), at: at(1), ...community }),
      aPost(id('u-dee'), { id: id('p-1'), at: at(2), ...community }),
    ]);
    await applyAs(context, 'e-post', { kind: 'post', id: id('p-1'), postId: id('p-1'), at: NOW }, NOW + 1);
    const read = outcomes(context);
    // Each member's `post` record counted both posts: it shrinks to u-cy's.
    expect(await read.outcome('e-post')).to.deep.equal({
      voided: 1,
      shrunk: 5,
      replaced: 0,
      removed: 0,
      listed: 5,
    });
    const pages: string[][] = [];
    let after;
    do {
      const page = await read.port.changes(id('e-post'), 2, after);
      pages.push(page.items.map((change) => change.userId));
      after = page.next;
    } while (after);
    expect(pages).to.deep.equal([[id('u-m1'), id('u-m2')], [id('u-m3'), id('u-m4')], [id('u-m5')]]);
    const [first] = await read.all('e-post');
    expect(first).to.deep.include({ change: 'shrunk' });
    expect(first?.before).to.deep.equal({
      actorsCount: 2,
      actorIds: [id('u-dee'), id('u-cy')],
      lastActionId: id('p-1'),
    });
    expect(first?.after).to.deep.equal({ actorsCount: 1, actorIds: [id('u-cy')], lastActionId: id('p-0') });
  },
  { needs: 'removals' },
);
