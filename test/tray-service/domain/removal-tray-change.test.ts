import { expect } from 'chai';
import {
  REMOVAL_CHANGES_LISTED,
  removalChange,
  summariseRemoval,
  tallyRemovalChanges,
  type RecordCounts,
} from '../../../tray-service/domain/removal-tray-change.ts';

const counts = (actorsCount: number, actorIds: string[], lastActionId: string): RecordCounts => ({
  actorsCount,
  actorIds,
  lastActionId,
});
const ana = { userId: 'u-ana', key: 'comment_p-1_u-ana' };

describe('removalChange', () => {
  it('is shrunk when the count or the actors differ', () => {
    const before = counts(3, ['u-dee', 'u-cy', 'u-ben'], 'cm-3');
    expect(removalChange(ana, before, counts(2, ['u-cy', 'u-ben'], 'cm-2')).change).to.equal('shrunk');
    // Four actors, the newest one's action gone: still four, but another three shown.
    expect(
      removalChange(
        ana,
        counts(4, ['u-eve', 'u-dee', 'u-cy'], 'cm-5'),
        counts(4, ['u-dee', 'u-eve', 'u-cy'], 'cm-4'),
      ).change,
    ).to.equal('shrunk');
  });

  it('is replaced when only the action the record names changed', () => {
    const before = counts(2, ['u-ben', 'u-cy'], 'cm-5');
    expect(removalChange(ana, before, counts(2, ['u-ben', 'u-cy'], 'cm-4'))).to.deep.equal({
      ...ana,
      change: 'replaced',
      before,
      after: counts(2, ['u-ben', 'u-cy'], 'cm-4'),
    });
  });

  it('is removed, with no after, when the record went', () => {
    const before = counts(1, ['u-ben'], 'cm-1');
    expect(removalChange(ana, before, undefined)).to.deep.equal({ ...ana, change: 'removed', before });
  });
});

describe('summariseRemoval', () => {
  const removed = (i: number) =>
    removalChange(
      { userId: `u-${String(i).padStart(6, '0')}`, key: `post_c-1_u-${i}` },
      counts(1, ['u-x'], 'p-1'),
      undefined,
    );

  it('counts every change and lists the first REMOVAL_CHANGES_LISTED in (user, key) order', () => {
    const changes = Array.from({ length: REMOVAL_CHANGES_LISTED + 500 }, (_, i) => removed(i)).reverse();
    const { outcome, listed } = summariseRemoval(1, tallyRemovalChanges(changes));
    expect(outcome).to.deep.equal({
      voided: 1,
      shrunk: 0,
      replaced: 0,
      removed: REMOVAL_CHANGES_LISTED + 500,
      listed: REMOVAL_CHANGES_LISTED,
    });
    expect(listed.map((change) => change.userId)).to.deep.equal(
      Array.from({ length: REMOVAL_CHANGES_LISTED }, (_, i) => removed(i).userId),
    );
  });

  // The order storage pages the kept changes in (COLLATE "C", MongoDB's): by code point, which
  // puts a user id above U+FFFF after one in U+E000-U+FFFF, where UTF-16 units put it before.
  it('keeps the first in code point order, as storage lists them', () => {
    const astral = { userId: 'u-\u{1F600}', key: 'k' };
    const privateUse = { userId: 'u-\uE000', key: 'k' };
    const change = (identity: { userId: string; key: string }) =>
      removalChange(identity, counts(1, ['x'], 'a-1'), undefined);
    const many = [
      change(astral),
      ...Array.from({ length: REMOVAL_CHANGES_LISTED - 1 }, (_, i) => change({ userId: `u-${i}`, key: 'k' })),
      change(privateUse),
    ];
    const { listed } = summariseRemoval(1, tallyRemovalChanges(many));
    expect(listed.map((entry) => entry.userId))
      .to.include(privateUse.userId)
      .and.not.include(astral.userId);
  });

  // A deleted post of a community of millions is tallied a part of its members at a time.
  it('tallies in parts as it does at once', () => {
    const changes = Array.from({ length: REMOVAL_CHANGES_LISTED * 3 }, (_, i) =>
      i % 3 === 0
        ? removed(i)
        : removalChange(
            { userId: `u-${String(i).padStart(6, '0')}`, key: 'k' },
            counts(2, ['u-x', 'u-y'], 'p-2'),
            i % 3 === 1 ? counts(1, ['u-x'], 'p-1') : counts(2, ['u-x', 'u-y'], 'p-1'),
          ),
    ).sort(() => 0.5 - Math.random());
    let tally = tallyRemovalChanges([]);
    for (let start = 0; start < changes.length; start += 700)
      tally = tallyRemovalChanges(changes.slice(start, start + 700), tally);
    expect(tally.first).to.have.lengthOf(REMOVAL_CHANGES_LISTED);
    expect(tally).to.deep.equal(tallyRemovalChanges(changes));
    expect(summariseRemoval(1, tally).outcome).to.deep.equal({
      voided: 1,
      shrunk: REMOVAL_CHANGES_LISTED,
      replaced: REMOVAL_CHANGES_LISTED,
      removed: REMOVAL_CHANGES_LISTED,
      listed: REMOVAL_CHANGES_LISTED,
    });
  });

  it('lists only what is left of the cap after an earlier application listed some', () => {
    const { outcome, listed } = summariseRemoval(
      0,
      tallyRemovalChanges([removed(1), removed(2)]),
      REMOVAL_CHANGES_LISTED - 1,
    );
    expect(outcome.listed).to.equal(1);
    expect(listed.map((change) => change.userId)).to.deep.equal([removed(1).userId]);
    expect(
      summariseRemoval(0, tallyRemovalChanges([removed(3)]), REMOVAL_CHANGES_LISTED).listed,
    ).to.deep.equal([]);
  });
});
