import { expect } from 'chai';
import { toDecisionDoc } from '../../../tray-service/domain/decision-doc.ts';
import { MAX_EVENT_ID_LENGTH } from '../../../tray-service/domain/event-id.ts';

describe('toDecisionDoc', () => {
  const event = {
    key: 'ev-1',
    event: 'post.didCreate',
    receivedAt: new Date(0),
    expiresAt: new Date(86_400_000),
  };
  const decide = (userId: string) =>
    toDecisionDoc(
      event,
      'blocked-words',
      { action: 'flag', reason: 'r', subject: { type: 'post', id: 'p-1' }, userId },
      { now: new Date(1), delivery: 'off' },
    );

  it('drops a user id over 128 characters (an invalid event names it; no index could hold it)', () => {
    expect(decide('u'.repeat(MAX_EVENT_ID_LENGTH + 1))).to.not.have.property('userId');
  });
  it('keeps a user id of up to 128 characters', () => {
    expect(decide('u'.repeat(MAX_EVENT_ID_LENGTH))).to.include({ userId: 'u'.repeat(MAX_EVENT_ID_LENGTH) });
  });
  it('expires with its event: the expiry storage gave the event', () => {
    expect(decide('u-1').expiresAt).to.deep.equal(event.expiresAt);
  });
});
