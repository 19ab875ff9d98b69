import { expect } from 'chai';
import type { Removal } from '../../../../tray-service/domain/removal.ts';
import type {
  RemovalOutcome,
  RemovalTrayChange,
} from '../../../../tray-service/domain/removal-tray-change.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import type { RemovalOutcomesPort } from '../../../../tray-service/storage/port.ts';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { modelledStorage, type ModelledStorage } from './modelled-storage.ts';

// What a removal event changed (docs/operations.md#what-a-removal-changed): recorded by the
// adapter in the write that applies the removal, under the event's key, and read back by the
// admin API through storage.removalOutcomes.

/** What every case below works with; event keys are given as names, made the case's own by `id`. */
interface OutcomesCase {
  readonly context: ConformanceContext;
  readonly id: (name: string) => string;
  readonly tray: ModelledStorage;
  readonly port: RemovalOutcomesPort;
  /** Applies `removal` as the worker does for the stored event `eventKey`. */
  applyAs(eventKey: string, removal: Removal, now: number): Promise<void>;
  outcome(eventKey: string): Promise<RemovalOutcome | undefined>;
  /** Every change listed under `eventKey` (one page). */
  all(eventKey: string): Promise<RemovalTrayChange[]>;
  /** The comment on `p-1` removed, at NOW. */
  comment(commentId: string): Removal;
  /** u-ana's `comment` record at `now`; fails when she has none. */
  commentRecord(now: number, what: string): Promise<TrayRecord>;
}

/** Registers a case on the adapters with removals, given its storage, model and outcomes. */
function outcomesCase(name: string, run: (tray: OutcomesCase) => Promise<void>): void {
  conformanceCase(
    name,
    async (context) => {
      const { id, storage } = context;
      const apply = storage.writes.applyRemovals;
      const port = storage.removalOutcomes;
      if (!apply) throw new Error('this adapter has no removals');
      if (!port) throw new Error('this adapter records no removal outcomes');
      const tray = modelledStorage(context);
      await run({
        context,
        id,
        tray,
        port,
        applyAs: (eventKey, removal, now) =>
          apply([removal], { ...context.write(now), eventKey: id(eventKey) }),
        outcome: (eventKey) => port.outcome(id(eventKey)),
        all: async (eventKey) => (await port.changes(id(eventKey), 100)).items,
        comment: (commentId) => ({ kind: 'comment', id: id(commentId), postId: id('p-1'), at: NOW }),
        async commentRecord(now, what) {
          const record = await tray.record('u-ana', 'comment', now);
          if (!record) throw new Error(what);
          return record;
        },
      });
    },
    { needs: 'removals' },
  );
}

/** An outcome's counts: those not named are 0. */
const counted = (counts: Partial<RemovalOutcome>): RemovalOutcome => ({
  voided: 0,
  shrunk: 0,
  replaced: 0,
  removed: 0,
  listed: 0,
  ...counts,
});

const countsOf = (record: TrayRecord) => ({
  actorsCount: record.actorsCount,
  actorIds: record.actors.map((actor) => actor.userId),
  lastActionId: record.lastActionId,
});

/** u-ben's, u-cy's and u-dee's comments on u-ana's post p-1, at minutes 1, 2 and 3. */
async function threeComments({ id, tray }: Pick<OutcomesCase, 'id' | 'tray'>): Promise<void> {
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
}

outcomesCase(
  'removal outcomes: a record that shrank and one removed, each with its counts before and after; a redelivery adds nothing',
  async ({ id, tray, applyAs, outcome, all, comment, commentRecord }) => {
    await threeComments({ id, tray });
    const before = await commentRecord(NOW, 'no comment record');
    await applyAs('e-dee', comment('cm-u-dee'), NOW + 1);
    const after = await commentRecord(NOW + 1, 'the record went');
    expect(await outcome('e-dee')).to.deep.equal(counted({ voided: 1, shrunk: 1, listed: 1 }));
    expect(await all('e-dee')).to.deep.equal([
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
    await applyAs('e-dee', comment('cm-u-dee'), NOW + 2);
    expect(await outcome('e-dee')).to.deep.equal(counted({ voided: 1, shrunk: 1, listed: 1 }));
    expect(await all('e-dee')).to.have.length(1);

    await applyAs('e-cy', comment('cm-u-cy'), NOW + 3);
    const last = await tray.record('u-ana', 'comment', NOW + 3);
    await applyAs('e-ben', comment('cm-u-ben'), NOW + 4);
    expect(await tray.record('u-ana', 'comment', NOW + 4)).to.equal(undefined);
    expect(await outcome('e-ben')).to.deep.equal(counted({ voided: 1, removed: 1, listed: 1 }));
    expect(await all('e-ben')).to.deep.equal([
      { userId: id('u-ana'), key: before.key, change: 'removed', before: last && countsOf(last) },
    ]);
  },
);

outcomesCase(
  'removal outcomes: two runs of one removal event at once (a stalled job taken over, a replay) count what it changed once',
  async ({ id, tray, applyAs, outcome, all, comment, commentRecord }) => {
    await threeComments({ id, tray });
    await Promise.all([
      applyAs('e-dee', comment('cm-u-dee'), NOW + 1),
      applyAs('e-dee', comment('cm-u-dee'), NOW + 1),
    ]);
    expect(countsOf(await commentRecord(NOW + 1, 'the record went'))).to.deep.equal({
      actorsCount: 2,
      actorIds: [id('u-cy'), id('u-ben')],
      lastActionId: id('cm-u-cy'),
    });
    expect(await outcome('e-dee')).to.deep.equal(counted({ voided: 1, shrunk: 1, listed: 1 }));
    expect(await all('e-dee')).to.have.length(1);
  },
);

outcomesCase(
  'removal outcomes: a removal arriving before its action records that it changed nothing, and the action arriving later leaves it so',
  async ({ context, id, tray, applyAs, outcome, all, comment }) => {
    await applyAs('e-early', comment('cm-late'), NOW);
    const nothing = counted({});
    expect(await outcome('e-early')).to.deep.equal(nothing);
    // Straight to storage: the reference tray is not told of removals applied outside it.
    await context.storage.writes.applyPersonal(
      [aComment(id('u-ben'), { postId: id('p-1'), owner: id('u-ana') }, { id: id('cm-late'), at: at(1) })],
      context.write(NOW + 1),
    );
    expect(await tray.records('u-ana', NOW + 1)).to.deep.equal([]);
    expect(await outcome('e-early')).to.deep.equal(nothing);
    expect(await all('e-early')).to.deep.equal([]);
    expect(await outcome('e-never-applied')).to.equal(undefined);
  },
);

outcomesCase(
  "removal outcomes: a deleted post counts every member's record it changed and pages them in (user, key) order",
  async ({ id, tray, port, applyAs, outcome, all }) => {
    const members = ['u-m1', 'u-m2', 'u-m3', 'u-m4', 'u-m5'];
    for (const member of members) await tray.membership(member, true, 0);
    const community = { communityId: tray.communityId };
    await tray.posts([
      aPost(id('u-cy'), { id: id('p-0'), at: at(1), ...community }),
      aPost(id('u-dee'), { id: id('p-1'), at: at(2), ...community }),
    ]);
    await applyAs('e-post', { kind: 'post', id: id('p-1'), postId: id('p-1'), at: NOW }, NOW + 1);
    // Each member's `post` record counted both posts: it shrinks to u-cy's.
    expect(await outcome('e-post')).to.deep.equal(counted({ voided: 1, shrunk: 5, listed: 5 }));
    const pages: string[][] = [];
    let after;
    do {
      const page = await port.changes(id('e-post'), 2, after);
      pages.push(page.items.map((change) => change.userId));
      after = page.next;
    } while (after);
    expect(pages).to.deep.equal([[id('u-m1'), id('u-m2')], [id('u-m3'), id('u-m4')], [id('u-m5')]]);
    const [first] = await all('e-post');
    expect(first).to.deep.include({ change: 'shrunk' });
    expect(first?.before).to.deep.equal({
      actorsCount: 2,
      actorIds: [id('u-dee'), id('u-cy')],
      lastActionId: id('p-1'),
    });
    expect(first?.after).to.deep.equal({ actorsCount: 1, actorIds: [id('u-cy')], lastActionId: id('p-0') });
  },
);
