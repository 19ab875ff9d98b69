import { DELETED_USER_NAME } from '../domain/activity.ts';
import type { ActorSnapshot, TrayRecord } from '../domain/tray-record.ts';

/** What a record's message is made of: the fields any reader's record carries. */
export type MessageFields = Pick<TrayRecord, 'verb' | 'feed' | 'mentionIn' | 'actors' | 'actorsCount'>;
import type { ActorForm, Placeholder } from './message-keys.ts';
import { sanitizeName } from '../domain/sanitize-name.ts';
import { isolateName, type TextDirection } from './isolate-name.ts';

export type MessageValues = Readonly<Record<Placeholder, string | number>>;

export interface RecordMessage {
  /** A key of `messageKeys`. */
  key: string;
  values: MessageValues;
}

/**
 * Which message a stored record shows, and the values of its placeholders (docs/contract.md#tray-records),
 * each name isolated when written the other way than the message's direction (isolate-name.ts):
 * `directionOf` the key, the direction of the text that key shows (a locale's catalogue may lack a
 * message, shown by the default locale's text).
 * Pure: the record stores names as they were (docs/contract.md#userdidupdate-userdiddelete); nothing here reads other data.
 * An actor whose snapshot is marked deleted reads `deletedName`, the reader's locale's word for a
 * deleted user (docs/messages.md#deleted-users): the mark, not the name, tells them apart, since a
 * live user may be called `Deleted user` too.
 */
export function messageForRecord(
  record: MessageFields,
  deletedName = DELETED_USER_NAME,
  directionOf: (key: string) => TextDirection = () => 'ltr',
): RecordMessage {
  // The key first: the names are isolated by the direction of the text it shows. The worker keeps
  // actors.length === min(actorsCount, 3); trusting the larger of the two keeps an inconsistent
  // record renderable instead of printing "undefined".
  const count = Math.max(record.actorsCount, record.actors.length, 1);
  const form: ActorForm = count === 1 ? '1' : count === 2 ? '2' : '3+';
  const feed = record.feed.kind;
  const key =
    record.verb === 'mention'
      ? // A record without mentionIn predates the field; a post is the platform's first mention target.
        `mention.${record.mentionIn ?? 'post'}.${feed}`
      : record.verb === 'mentreply'
        ? `mentreply.${form}`
        : `${record.verb}.${feed}.${form}`;
  const direction = directionOf(key);
  const shown = (name: string) => isolateName(name, direction);
  const nameOf = (actor: ActorSnapshot | undefined) =>
    shown(actor?.deleted === true ? deletedName : sanitizeName(actor?.name ?? ''));
  const values: MessageValues = {
    actor1: nameOf(record.actors[0]),
    actor2: nameOf(record.actors[1]),
    // 2.3: "'others' count is the number of actors not named" (two are named in the 3+ form).
    others: Math.max(count - 2, 0),
    community: record.feed.kind === 'community' ? shown(sanitizeName(record.feed.name)) : '',
    feedOwner: record.feed.kind === 'user' ? shown(sanitizeName(record.feed.name)) : '',
  };
  // A mention on a user feed names the mentioning user's feed ("A has mentioned you on a comment in
  // A feed"), whoever owns the feed: docs/tray-rules.md, "Mentions on a user feed".
  if (record.verb === 'mention' && feed === 'user')
    return { key, values: { ...values, feedOwner: values.actor1 } };
  return { key, values };
}
