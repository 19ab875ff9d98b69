import { expect } from 'chai';
import {
  mayCount,
  type KeptAction,
} from '../../../../../tray-service/storage/mongodb/removals/reapply-to-voided.ts';
import { aComment } from '../../../../support/activity-builder.ts';

// Which records a voided redelivery computes again: only those that may still count the voided
// action (a retry after a try that raced its removal), never one that cannot (a plain redelivery),
// which computing again would change (a back-dated mute applied). The behaviour on a server is in
// apply-removals.test.ts and the conformance suite's back-dated mutes.
describe('mayCount (a record that may count a voided action)', () => {
  const post = { postId: 'p-1', owner: 'u-ana' };
  const voided = aComment('u-ben', post, { id: 'cm-b', at: 1_000, userFeed: 'u-ana' });
  const actor = (userId: string, at: number) => ({ userId, name: userId, at });
  const record = (fields: Partial<Parameters<typeof mayCount>[0]> = {}) => ({
    _id: 'comment_p-1_u-ana',
    userId: 'u-ana',
    countFrom: 0,
    lastActionId: 'cm-c',
    actors: [actor('u-cy', 3_000)],
    actorsCount: 1,
    ...fields,
  });
  const kept = (actorId: string, at: number, lastActionId: string): KeptAction => ({
    actorId,
    at,
    lastActionId,
  });

  it('counts it when it names it as its latest action', () => {
    expect(mayCount(record({ lastActionId: 'cm-b' }), voided, [])).to.equal(true);
  });

  it('counts it when it shows its actor at its time, and no other kept action of theirs then', () => {
    const shown = record({ actors: [actor('u-cy', 3_000), actor('u-ben', 1_000)], actorsCount: 2 });
    expect(mayCount(shown, voided, [kept('u-cy', 3_000, 'cm-c')])).to.equal(true);
    expect(mayCount(shown, voided, [kept('u-ben', 1_000, 'cm-b2')]), 'explained by another').to.equal(false);
    // The voided action itself, still kept (a try that failed past its keep), explains nothing.
    expect(mayCount(shown, voided, [kept('u-ben', 1_000, 'cm-b')])).to.equal(true);
  });

  it('does not when it shows its actor at another time, or not at all with every actor shown', () => {
    const later = record({ actors: [actor('u-ben', 2_000)], actorsCount: 1 });
    expect(mayCount(later, voided, [])).to.equal(false);
    expect(mayCount(record(), voided, [])).to.equal(false);
  });

  it('never counts its recipient’s own action, or one before its counting start', () => {
    const own = aComment('u-ana', post, { id: 'cm-a', at: 1_000, userFeed: 'u-ana' });
    expect(mayCount(record({ lastActionId: 'cm-a' }), own, [])).to.equal(false);
    expect(mayCount(record({ lastActionId: 'cm-b', countFrom: 1_001 }), voided, [])).to.equal(false);
  });

  describe('a record counting more actors than it shows', () => {
    const three = [actor('u-eve', 5_000), actor('u-dee', 4_000), actor('u-cy', 3_000)];
    const keptThree = [
      kept('u-eve', 5_000, 'cm-e'),
      kept('u-dee', 4_000, 'cm-d'),
      kept('u-cy', 3_000, 'cm-c'),
    ];
    const hiding = record({ actors: three, actorsCount: 4 });

    it('counts it when it would hide there and the kept actions have fewer actors than it counts', () => {
      expect(mayCount(hiding, voided, keptThree)).to.equal(true);
    });

    it('does not when the kept actions have as many actors as it counts', () => {
      expect(mayCount(hiding, voided, [...keptThree, kept('u-fay', 2_000, 'cm-f')])).to.equal(false);
    });

    it('does not when its actor has another kept action the record counts', () => {
      expect(mayCount(hiding, voided, [...keptThree, kept('u-ben', 500, 'cm-b0')])).to.equal(false);
      // One before the record's counting start is not counted: the voided one may be.
      const later = record({ actors: three, actorsCount: 4, countFrom: 600 });
      expect(mayCount(later, voided, [...keptThree, kept('u-ben', 500, 'cm-b0')])).to.equal(true);
    });

    it('does not when it is newer than the oldest actor shown: it would show', () => {
      const newer = aComment('u-ben', post, { id: 'cm-b', at: 3_500, userFeed: 'u-ana' });
      expect(mayCount(hiding, newer, keptThree)).to.equal(false);
    });
  });
});
