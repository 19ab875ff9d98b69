import { expect } from 'chai';
import { messageKey } from '../../receiver/message-key.ts';

describe('messageKey', () => {
  it('is lowercase hex SHA-256, like the platform’s dedupe key (the job id and the tools expect one format)', () => {
    expect(messageKey('acme', 'msg_1')).to.match(/^[0-9a-f]{64}$/);
  });

  it('is the same for every delivery of one message id of one webhook, and across releases', () => {
    // Computed outside the project (Python's hashlib over "standard-webhooks\nacme\nmsg_1"): a
    // change of what is hashed would let a message queued before an upgrade be queued again after.
    expect(messageKey('acme', 'msg_1')).to.equal(
      '108c5a3224053733814c1a38443dee56895afa02b0bd1715c893da46f943eca7',
    );
  });

  it('keeps message ids and webhooks apart', () => {
    const keys = new Set([
      messageKey('acme', 'msg_1'),
      messageKey('acme', 'msg_2'),
      messageKey('other', 'msg_1'),
      messageKey('acme\nmsg', '1'),
    ]);
    expect(keys.size).to.equal(4);
  });
});
