import type { TrayRecordDoc } from '../../shared/tray/tray-record.ts';
import type { MessageRenderer } from './message-renderer.ts';

/**
 * Plain-English tray messages (shared/spec/messages-en.md) until the localised renderer of issue 6
 * lands on main; then this file is deleted and main.ts wires the real one.
 */

function actorsPhrase(record: TrayRecordDoc): { text: string; plural: boolean } {
  const [latest, previous] = record.actors;
  const first = latest?.name ?? 'Someone';
  const count = Math.max(record.actorsCount, record.actors.length, 1);
  if (count === 1 || previous === undefined) return { text: first, plural: false };
  if (count === 2) return { text: `${first} and ${previous.name}`, plural: true };
  const others = count - 2;
  return {
    text: `${first}, ${previous.name} and ${others} ${others === 1 ? 'other' : 'others'}`,
    plural: true,
  };
}

function inCommunity(record: TrayRecordDoc): string {
  return record.feed.kind === 'community' ? ` in ${record.feed.name}` : '';
}

export function renderEnglish(record: TrayRecordDoc): string {
  const { text, plural } = actorsPhrase(record);
  switch (record.verb) {
    case 'post':
      return `${text} ${plural && record.actorsCount === 2 ? 'created post' : 'posted'} in ${record.feed.name}`;
    case 'comment':
      return `${text} commented on your post${inCommunity(record)}`;
    case 'mentreply':
      return `${text} ${plural ? 'have' : 'has'} replied to your comment`;
    case 'reaction':
    case 'mentreact': {
      const what = record.verb === 'reaction' ? 'post' : 'comment';
      return `${text} ${plural ? 'added reactions' : 'added a reaction'} to your ${what}${inCommunity(record)}`;
    }
    case 'mention': {
      const where = record.feed.kind === 'community' ? record.feed.name : `${record.feed.name} feed`;
      return `${text} has mentioned you on a ${record.mentionIn ?? 'post'} in ${where}`;
    }
  }
}

export const englishFallback: MessageRenderer = {
  locales: ['en'],
  defaultLocale: 'en',
  negotiate: () => 'en',
  render: (record) => renderEnglish(record),
};
