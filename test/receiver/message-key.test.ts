import { expect } from 'chai';
import { messageKey } from '../../receiver/message-key.ts';

describe('messageKey', () => {
  it('is lowercase hex SHA-256, like the platform’s dedupe key (the job id and the tools expect one format)', () => {
    expect(messageKey('acme', 'msg_1')).to.match(/^[0-9a-f]{64}$/);
  });

  it('is the same for every delivery of one message id of one webhook', () => {
    expect(messageKey('acme', 'msg_1')).to.equal(messageKey('acme', 'msg_1'));
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
