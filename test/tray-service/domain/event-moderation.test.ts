import { expect } from 'chai';
import { mostSevere, outcomesByEvent } from '../../../tray-service/domain/event-moderation.ts';

describe('an event’s moderation outcome', () => {
  it('is its most severe decision: a ban request outweighs a flag, whatever the order', () => {
    expect(mostSevere(undefined, 'flag')).to.equal('flag');
    expect(mostSevere('flag', 'ban-request')).to.equal('ban-request');
    expect(mostSevere('ban-request', 'flag')).to.equal('ban-request');
    expect(mostSevere(undefined, undefined)).to.equal(undefined);
  });
  it('is computed per event over a batch of decisions', () => {
    expect(
      outcomesByEvent([
        { eventKey: 'a', action: 'flag' },
        { eventKey: 'b', action: 'ban-request' },
        { eventKey: 'b', action: 'flag' },
        { eventKey: 'a', action: 'flag' },
      ]),
    ).to.deep.equal(
      new Map([
        ['a', 'flag'],
        ['b', 'ban-request'],
      ]),
    );
  });
});
