import { expect } from 'chai';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { messagesEnRows } from '../../support/messages-en-rows.ts';
import { buildTrayRecord } from '../../support/tray-record-builder.ts';

describe('tray messages in English (docs/messages.md#the-english-reference-table)', () => {
  const renderer = createMessageRenderer({ defaultLocale: 'en' });

  for (const { spec, expected } of messagesEnRows) {
    const shape = `${spec.verb}${spec.mentionIn ? ` in a ${spec.mentionIn}` : ''} on a ${spec.feed} feed`;
    it(`${shape} with ${spec.actors} actor(s) reads "${expected}"`, () => {
      expect(renderer.render(buildTrayRecord(spec), 'en')).to.equal(expected);
    });
  }
});
