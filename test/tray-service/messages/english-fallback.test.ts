import { expect } from 'chai';
import type { ActorSnapshot, FeedRef, TrayRecordDoc, TrayVerb } from '../../../shared/tray/tray-record.ts';
import { renderEnglish } from '../../../tray-service/messages/english-fallback.ts';
import { aTrayRecord } from '../api/support/tray-record-builder.ts';

const names = ['Ana', 'Ben', 'Cid', 'Dee', 'Eve', 'Fay'];
const community: FeedRef = { kind: 'community', id: 'c', name: 'Hiking Club' };
const userFeed: FeedRef = { kind: 'user', id: 'ana', name: 'Ana' };

function record(
  verb: TrayVerb,
  feed: FeedRef,
  count: number,
  extra: Partial<TrayRecordDoc> = {},
): TrayRecordDoc {
  const actors: ActorSnapshot[] = names
    .slice(0, Math.min(count, 3))
    .map((name, i) => ({ userId: name, name, at: 10 - i }));
  return aTrayRecord({ userId: 'me', verb, feed, actors, actorsCount: count, ...extra });
}

describe('renderEnglish (shared/spec/messages-en.md)', () => {
  const rows: [TrayRecordDoc, string][] = [
    [record('post', community, 1), 'Ana posted in Hiking Club'],
    [record('post', community, 2), 'Ana and Ben created post in Hiking Club'],
    [record('post', community, 3), 'Ana, Ben and 1 other posted in Hiking Club'],
    [record('post', community, 5), 'Ana, Ben and 3 others posted in Hiking Club'],
    [record('comment', userFeed, 1), 'Ana commented on your post'],
    [record('comment', userFeed, 4), 'Ana, Ben and 2 others commented on your post'],
    [record('comment', community, 3), 'Ana, Ben and 1 other commented on your post in Hiking Club'],
    [record('mentreply', community, 1), 'Ana has replied to your comment'],
    [record('mentreply', userFeed, 2), 'Ana and Ben have replied to your comment'],
    [record('reaction', userFeed, 1), 'Ana added a reaction to your post'],
    [record('reaction', community, 3), 'Ana, Ben and 1 other added reactions to your post in Hiking Club'],
    [record('mentreact', community, 2), 'Ana and Ben added reactions to your comment in Hiking Club'],
    [
      record('mention', community, 1, { mentionIn: 'comment' }),
      'Ana has mentioned you on a comment in Hiking Club',
    ],
    [record('mention', userFeed, 1, { mentionIn: 'post' }), 'Ana has mentioned you on a post in Ana feed'],
  ];
  for (const [input, expected] of rows) {
    it(`renders "${expected}"`, () => {
      expect(renderEnglish(input)).to.equal(expected);
    });
  }
});
