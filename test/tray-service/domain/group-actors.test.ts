import { expect } from 'chai';
import type { ActorAction } from '../../../tray-service/domain/actor-action.ts';
import { compareActions, countedActors, groupActors } from '../../../tray-service/domain/group-actors.ts';

const action = (userId: string, at: number, actionId = `a-${userId}-${at}`): ActorAction => ({
  actor: { userId, name: userId.toUpperCase() },
  at,
  actionId,
});

describe('groupActors and countedActors (the group actor core)', () => {
  describe('compareActions', () => {
    it('orders by time, then by action id, and calls equal actions equal', () => {
      expect(compareActions({ at: 1, actionId: 'z' }, { at: 2, actionId: 'a' })).to.be.below(0);
      expect(compareActions({ at: 2, actionId: 'a' }, { at: 1, actionId: 'z' })).to.be.above(0);
      expect(compareActions({ at: 1, actionId: 'a' }, { at: 1, actionId: 'b' })).to.equal(-1);
      expect(compareActions({ at: 1, actionId: 'b' }, { at: 1, actionId: 'a' })).to.equal(1);
      expect(compareActions({ at: 1, actionId: 'a' }, { at: 1, actionId: 'a' })).to.equal(0);
    });
  });

  describe('groupActors', () => {
    it('keeps each actor at their latest action, newest first, ranked', () => {
      const group = groupActors([
        action('b', 5),
        action('a', 3),
        action('b', 2),
        action('c', 9),
        action('a', 7),
      ]);
      expect(group.actions.map((a) => [a.actor.userId, a.at])).to.deep.equal([
        ['c', 9],
        ['a', 7],
        ['b', 5],
      ]);
      expect([...group.rank]).to.deep.equal([
        ['c', 0],
        ['a', 1],
        ['b', 2],
      ]);
    });

    it('breaks a tie of times by the higher action id', () => {
      const group = groupActors([action('a', 4, 'x1'), action('a', 4, 'x2'), action('a', 4, 'x0')]);
      expect(group.actions.map((a) => a.actionId)).to.deep.equal(['x2']);
    });
  });

  describe('countedActors', () => {
    const group = groupActors([
      action('a', 10),
      action('b', 20),
      action('c', 30),
      action('d', 40),
      action('e', 50),
    ]);

    it('counts every actor from countFrom on, the one acting exactly at countFrom included', () => {
      expect(countedActors(group, 30, 'z')).to.deep.equal({
        named: [
          { userId: 'e', name: 'E', at: 50 },
          { userId: 'd', name: 'D', at: 40 },
          { userId: 'c', name: 'C', at: 30 },
        ],
        count: 3,
      });
      expect(countedActors(group, 31, 'z').count).to.equal(2);
      expect(countedActors(group, 0, 'z').count).to.equal(5);
      expect(countedActors(group, 51, 'z')).to.deep.equal({ named: [], count: 0 });
    });

    it('leaves the recipient out of the names and the count when they acted in range', () => {
      const counted = countedActors(group, 0, 'd');
      expect(counted.count).to.equal(4);
      expect(counted.named.map((a) => a.userId)).to.deep.equal(['e', 'c', 'b']);
    });

    it('counts everyone when the recipient acted before countFrom', () => {
      expect(countedActors(group, 15, 'a')).to.include({ count: 4 });
    });

    it('names at most three', () => {
      expect(countedActors(group, 0, 'z').named).to.have.length(3);
    });

    it('counts nobody in an empty group', () => {
      expect(countedActors(groupActors([]), 0, 'z')).to.deep.equal({ named: [], count: 0 });
    });
  });
});
