import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { messageForRecord } from '../../../tray-service/messages/message-for-record.ts';
import { DELETED_USER_NAME } from '../../../tray-service/domain/activity.ts';
import { DELETED_USER_KEY, messageKeys } from '../../../tray-service/messages/message-keys.ts';
import { messagesEnEveryKey, messagesEnRows } from '../../support/messages-en-rows.ts';
import { buildTrayRecord } from '../../support/tray-record-builder.ts';

/** The keys of the shipped English catalogue (its wording is never read here: the rows hold it). */
function englishCatalogueKeys(): string[] {
  const file = new URL('../../../tray-service/messages/locales/en.json', import.meta.url);
  const catalogue = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return Object.keys(catalogue).filter((key) => !key.startsWith('_'));
}

describe('tray messages in English (docs/messages.md#the-english-reference-table)', () => {
  const renderer = createMessageRenderer({ defaultLocale: 'en' });

  describe('every row of the reference table', () => {
    for (const { spec, expected } of messagesEnRows) {
      const shape = `${spec.verb}${spec.mentionIn ? ` in a ${spec.mentionIn}` : ''} on a ${spec.feed} feed`;
      it(`${shape} with ${spec.actors} actor(s) reads "${expected}"`, () => {
        expect(renderer.render(buildTrayRecord(spec), 'en')).to.equal(expected);
      });
    }
  });

  describe('every message key, word for word (docs/messages.md#every-english-message)', () => {
    for (const { key, spec, expected, source } of messagesEnEveryKey) {
      it(`${key} on a ${spec.feed} feed with ${spec.actors} actor(s) reads "${expected}" (${source})`, () => {
        const record = buildTrayRecord(spec);
        expect(messageForRecord(record).key).to.equal(key);
        expect(renderer.render(record, 'en')).to.equal(expected);
      });
    }

    it('covers every key of the English catalogue, and the catalogue has every message key', () => {
      const covered = [...new Set(messagesEnEveryKey.map((row) => row.key))].sort();
      const messages = [...messageKeys.keys()].filter((key) => key !== DELETED_USER_KEY);
      expect(covered).to.deep.equal(messages.sort());
      expect(englishCatalogueKeys().sort()).to.deep.equal([...covered, DELETED_USER_KEY].sort());
    });

    it("names a deleted user as the contract's English does (docs/messages.md#deleted-users)", () => {
      const record = buildTrayRecord({ verb: 'comment', feed: 'user', actors: 2 });
      record.actors = record.actors.map((actor, index) =>
        index === 1 ? { userId: actor.userId, name: DELETED_USER_NAME, deleted: true, at: actor.at } : actor,
      );
      expect(DELETED_USER_NAME).to.equal('Deleted user');
      expect(renderer.render(record, 'en')).to.equal('Ana and Deleted user commented on your post');
    });

    it('renders each 3-or-more key with one actor not named ("1 other") and with several ("N others")', () => {
      const counts = new Map<string, Set<string>>();
      for (const { key, spec } of messagesEnEveryKey.filter((row) => row.key.endsWith('.3+'))) {
        const seen = counts.get(key) ?? new Set<string>();
        seen.add(spec.actors === 3 ? 'one' : 'other');
        counts.set(key, seen);
      }
      const plural = [...messageKeys.keys()].filter((key) => key.endsWith('.3+'));
      expect(plural).to.have.length(9);
      for (const key of plural)
        expect([...(counts.get(key) ?? [])].sort(), key).to.deep.equal(['one', 'other']);
    });
  });
});
