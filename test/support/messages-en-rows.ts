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

/** Where an expected message comes from: the reference table, or the platform's templates alone. */
export type MessageSource = 'reference table' | 'platform template' | 'project (no platform template)';

export interface MessageKeyRow {
  /** The catalogue key the record must render with (tray-service/messages/message-keys.ts). */
  key: string;
  spec: TrayRecordSpec;
  expected: string;
  source: MessageSource;
}

const table: MessageSource = 'reference table';
const template: MessageSource = 'platform template';
const project: MessageSource = 'project (no platform template)';

/**
 * Every message key of every verb, feed kind and actor-count form, each written out word for word
 * from the platform's templates (docs/contract.md#tray-records): the reference table's rows where
 * it has one, the templates' rules otherwise (two names joined by "and"; 3 or more: two names plus
 * "N others", "1 other" for one; "has replied" / "have replied"; "added a reaction" / "added
 * reactions"; a community feed adds " in <community>"). Every `.3+` key is rendered with one actor
 * not named and with several, so both plural forms are checked. Feed posts are not platform events;
 * their wording is the project's: the community message with "<feed owner> feed" for the feed.
 * A user feed's owner here is Gus, so a message naming the wrong user shows.
 */
export const messagesEnEveryKey: readonly MessageKeyRow[] = [
  {
    key: 'post.community.1',
    spec: { verb: 'post', feed: 'community', actors: 1 },
    source: table,
    expected: 'Ana posted in Hiking Club',
  },
  {
    key: 'post.community.2',
    spec: { verb: 'post', feed: 'community', actors: 2 },
    source: table,
    expected: 'Ana and Ben created post in Hiking Club',
  },
  {
    key: 'post.community.3+',
    spec: { verb: 'post', feed: 'community', actors: 3 },
    source: table,
    expected: 'Ana, Ben and 1 other posted in Hiking Club',
  },
  {
    key: 'post.community.3+',
    spec: { verb: 'post', feed: 'community', actors: 5 },
    source: table,
    expected: 'Ana, Ben and 3 others posted in Hiking Club',
  },

  {
    key: 'post.user.1',
    spec: { verb: 'post', feed: 'user', actors: 1, feedName: 'Gus' },
    source: project,
    expected: 'Ana posted in Gus feed',
  },
  {
    key: 'post.user.2',
    spec: { verb: 'post', feed: 'user', actors: 2, feedName: 'Gus' },
    source: project,
    expected: 'Ana and Ben created post in Gus feed',
  },
  {
    key: 'post.user.3+',
    spec: { verb: 'post', feed: 'user', actors: 3, feedName: 'Gus' },
    source: project,
    expected: 'Ana, Ben and 1 other posted in Gus feed',
  },
  {
    key: 'post.user.3+',
    spec: { verb: 'post', feed: 'user', actors: 4, feedName: 'Gus' },
    source: project,
    expected: 'Ana, Ben and 2 others posted in Gus feed',
  },

  {
    key: 'comment.user.1',
    spec: { verb: 'comment', feed: 'user', actors: 1, feedName: 'Gus' },
    source: table,
    expected: 'Ana commented on your post',
  },
  {
    key: 'comment.user.2',
    spec: { verb: 'comment', feed: 'user', actors: 2, feedName: 'Gus' },
    source: table,
    expected: 'Ana and Ben commented on your post',
  },
  {
    key: 'comment.user.3+',
    spec: { verb: 'comment', feed: 'user', actors: 3, feedName: 'Gus' },
    source: template,
    expected: 'Ana, Ben and 1 other commented on your post',
  },
  {
    key: 'comment.user.3+',
    spec: { verb: 'comment', feed: 'user', actors: 4, feedName: 'Gus' },
    source: table,
    expected: 'Ana, Ben and 2 others commented on your post',
  },

  {
    key: 'comment.community.1',
    spec: { verb: 'comment', feed: 'community', actors: 1 },
    source: table,
    expected: 'Ana commented on your post in Hiking Club',
  },
  {
    key: 'comment.community.2',
    spec: { verb: 'comment', feed: 'community', actors: 2 },
    source: template,
    expected: 'Ana and Ben commented on your post in Hiking Club',
  },
  {
    key: 'comment.community.3+',
    spec: { verb: 'comment', feed: 'community', actors: 3 },
    source: table,
    expected: 'Ana, Ben and 1 other commented on your post in Hiking Club',
  },
  {
    key: 'comment.community.3+',
    spec: { verb: 'comment', feed: 'community', actors: 7 },
    source: template,
    expected: 'Ana, Ben and 5 others commented on your post in Hiking Club',
  },

  ...(['user', 'community'] as const).flatMap((feed): MessageKeyRow[] => [
    {
      key: 'mentreply.1',
      spec: { verb: 'mentreply', feed, actors: 1 },
      source: table,
      expected: 'Ana has replied to your comment',
    },
    {
      key: 'mentreply.2',
      spec: { verb: 'mentreply', feed, actors: 2 },
      source: table,
      expected: 'Ana and Ben have replied to your comment',
    },
    {
      key: 'mentreply.3+',
      spec: { verb: 'mentreply', feed, actors: 3 },
      source: template,
      expected: 'Ana, Ben and 1 other have replied to your comment',
    },
    {
      key: 'mentreply.3+',
      spec: { verb: 'mentreply', feed, actors: 6 },
      source: table,
      expected: 'Ana, Ben and 4 others have replied to your comment',
    },
  ]),

  {
    key: 'reaction.user.1',
    spec: { verb: 'reaction', feed: 'user', actors: 1, feedName: 'Gus' },
    source: table,
    expected: 'Ana added a reaction to your post',
  },
  {
    key: 'reaction.user.2',
    spec: { verb: 'reaction', feed: 'user', actors: 2, feedName: 'Gus' },
    source: table,
    expected: 'Ana and Ben added reactions to your post',
  },
  {
    key: 'reaction.user.3+',
    spec: { verb: 'reaction', feed: 'user', actors: 3, feedName: 'Gus' },
    source: template,
    expected: 'Ana, Ben and 1 other added reactions to your post',
  },
  {
    key: 'reaction.user.3+',
    spec: { verb: 'reaction', feed: 'user', actors: 5, feedName: 'Gus' },
    source: template,
    expected: 'Ana, Ben and 3 others added reactions to your post',
  },

  {
    key: 'reaction.community.1',
    spec: { verb: 'reaction', feed: 'community', actors: 1 },
    source: template,
    expected: 'Ana added a reaction to your post in Hiking Club',
  },
  {
    key: 'reaction.community.2',
    spec: { verb: 'reaction', feed: 'community', actors: 2 },
    source: template,
    expected: 'Ana and Ben added reactions to your post in Hiking Club',
  },
  {
    key: 'reaction.community.3+',
    spec: { verb: 'reaction', feed: 'community', actors: 3 },
    source: table,
    expected: 'Ana, Ben and 1 other added reactions to your post in Hiking Club',
  },
  {
    key: 'reaction.community.3+',
    spec: { verb: 'reaction', feed: 'community', actors: 4 },
    source: template,
    expected: 'Ana, Ben and 2 others added reactions to your post in Hiking Club',
  },

  {
    key: 'mentreact.user.1',
    spec: { verb: 'mentreact', feed: 'user', actors: 1, feedName: 'Gus' },
    source: table,
    expected: 'Ana added a reaction to your comment',
  },
  {
    key: 'mentreact.user.2',
    spec: { verb: 'mentreact', feed: 'user', actors: 2, feedName: 'Gus' },
    source: template,
    expected: 'Ana and Ben added reactions to your comment',
  },
  {
    key: 'mentreact.user.3+',
    spec: { verb: 'mentreact', feed: 'user', actors: 3, feedName: 'Gus' },
    source: template,
    expected: 'Ana, Ben and 1 other added reactions to your comment',
  },
  {
    key: 'mentreact.user.3+',
    spec: { verb: 'mentreact', feed: 'user', actors: 5, feedName: 'Gus' },
    source: template,
    expected: 'Ana, Ben and 3 others added reactions to your comment',
  },

  {
    key: 'mentreact.community.1',
    spec: { verb: 'mentreact', feed: 'community', actors: 1 },
    source: template,
    expected: 'Ana added a reaction to your comment in Hiking Club',
  },
  {
    key: 'mentreact.community.2',
    spec: { verb: 'mentreact', feed: 'community', actors: 2 },
    source: table,
    expected: 'Ana and Ben added reactions to your comment in Hiking Club',
  },
  {
    key: 'mentreact.community.3+',
    spec: { verb: 'mentreact', feed: 'community', actors: 3 },
    source: template,
    expected: 'Ana, Ben and 1 other added reactions to your comment in Hiking Club',
  },
  {
    key: 'mentreact.community.3+',
    spec: { verb: 'mentreact', feed: 'community', actors: 4 },
    source: template,
    expected: 'Ana, Ben and 2 others added reactions to your comment in Hiking Club',
  },

  {
    key: 'mention.post.community',
    spec: { verb: 'mention', feed: 'community', actors: 1, mentionIn: 'post' },
    source: table,
    expected: 'Ana has mentioned you on a post in Hiking Club',
  },
  {
    key: 'mention.comment.community',
    spec: { verb: 'mention', feed: 'community', actors: 1, mentionIn: 'comment' },
    source: table,
    expected: 'Ana has mentioned you on a comment in Hiking Club',
  },
  // 2.3 names the mentioning user's feed ("in {DisplayName A} feed"), whoever owns the feed.
  {
    key: 'mention.post.user',
    spec: { verb: 'mention', feed: 'user', actors: 1, mentionIn: 'post', feedName: 'Gus' },
    source: template,
    expected: 'Ana has mentioned you on a post in Ana feed',
  },
  {
    key: 'mention.comment.user',
    spec: { verb: 'mention', feed: 'user', actors: 1, mentionIn: 'comment', feedName: 'Gus' },
    source: template,
    expected: 'Ana has mentioned you on a comment in Ana feed',
  },
];
