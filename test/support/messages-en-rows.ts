import type { TrayRecordSpec } from './tray-record-builder.ts';

/**
 * Every row of the English reference table (docs/messages.md#the-english-reference-table), as typed records and the
 * exact `description` each must produce. The `mentreply` rows are "any" feed; both are checked.
 */
export const messagesEnRows: readonly { spec: TrayRecordSpec; expected: string }[] = [
  { spec: { verb: 'post', feed: 'community', actors: 1 }, expected: 'Ana posted in Hiking Club' },
  {
    spec: { verb: 'post', feed: 'community', actors: 2 },
    expected: 'Ana and Ben created post in Hiking Club',
  },
  {
    spec: { verb: 'post', feed: 'community', actors: 3 },
    expected: 'Ana, Ben and 1 other posted in Hiking Club',
  },
  {
    spec: { verb: 'post', feed: 'community', actors: 5 },
    expected: 'Ana, Ben and 3 others posted in Hiking Club',
  },
  { spec: { verb: 'comment', feed: 'user', actors: 1 }, expected: 'Ana commented on your post' },
  { spec: { verb: 'comment', feed: 'user', actors: 2 }, expected: 'Ana and Ben commented on your post' },
  {
    spec: { verb: 'comment', feed: 'user', actors: 4 },
    expected: 'Ana, Ben and 2 others commented on your post',
  },
  {
    spec: { verb: 'comment', feed: 'community', actors: 1 },
    expected: 'Ana commented on your post in Hiking Club',
  },
  {
    spec: { verb: 'comment', feed: 'community', actors: 3 },
    expected: 'Ana, Ben and 1 other commented on your post in Hiking Club',
  },
  ...(['user', 'community'] as const).flatMap((feed) => [
    { spec: { verb: 'mentreply' as const, feed, actors: 1 }, expected: 'Ana has replied to your comment' },
    {
      spec: { verb: 'mentreply' as const, feed, actors: 2 },
      expected: 'Ana and Ben have replied to your comment',
    },
    {
      spec: { verb: 'mentreply' as const, feed, actors: 6 },
      expected: 'Ana, Ben and 4 others have replied to your comment',
    },
  ]),
  { spec: { verb: 'reaction', feed: 'user', actors: 1 }, expected: 'Ana added a reaction to your post' },
  {
    spec: { verb: 'reaction', feed: 'user', actors: 2 },
    expected: 'Ana and Ben added reactions to your post',
  },
  {
    spec: { verb: 'reaction', feed: 'community', actors: 3 },
    expected: 'Ana, Ben and 1 other added reactions to your post in Hiking Club',
  },
  { spec: { verb: 'mentreact', feed: 'user', actors: 1 }, expected: 'Ana added a reaction to your comment' },
  {
    spec: { verb: 'mentreact', feed: 'community', actors: 2 },
    expected: 'Ana and Ben added reactions to your comment in Hiking Club',
  },
  {
    spec: { verb: 'mention', feed: 'community', actors: 1, mentionIn: 'post' },
    expected: 'Ana has mentioned you on a post in Hiking Club',
  },
  {
    spec: { verb: 'mention', feed: 'community', actors: 1, mentionIn: 'comment' },
    expected: 'Ana has mentioned you on a comment in Hiking Club',
  },
  {
    spec: { verb: 'mention', feed: 'user', actors: 1, mentionIn: 'post', feedName: 'Ana' },
    expected: 'Ana has mentioned you on a post in Ana feed',
  },
];
