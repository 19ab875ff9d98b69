import type { ReferenceTray } from '../../../support/reference-tray/reference-tray.ts';
import {
  referenceCountUnread,
  referenceCountUnseen,
} from '../../../support/reference-tray/reference-tray-reads.ts';
import type { InboxCountPair, TrayStorage } from '../../../../tray-service/storage/port.ts';
import { inboxOf } from './inbox-operation.ts';

/**
 * Both inbox counts of many users in one call (InboxPort.countInboxes, how the live streams recount
 * every user a burst touched) against each user's own two counts (countUnread with the recorded
 * last-read time, countUnseen) and the reference tray's. `userIds` may repeat a user and name users
 * the tray has never seen (both counts 0). Returns the differences, one line each.
 */
export async function manyUsersCountDifferences(
  storage: TrayStorage,
  model: ReferenceTray,
  userIds: readonly string[],
  now: number,
): Promise<string[]> {
  const inbox = inboxOf(storage);
  const many = await inbox.countInboxes(userIds, now);
  const distinct = [...new Set(userIds)];
  const found: string[] = [];
  if (many.size !== distinct.length)
    found.push(`countInboxes answered ${many.size} users for ${distinct.length} asked`);
  for (const userId of distinct) {
    const own: InboxCountPair = {
      unread: await storage.records.countUnread(userId, 'recorded', now),
      unseen: await inbox.countUnseen(userId, now),
    };
    const modelled: InboxCountPair = {
      unread: referenceCountUnread(model, userId, model.lastRead(userId), now),
      unseen: referenceCountUnseen(model, userId, now),
    };
    // The counts alone: when the next expiry changes them is a case of its own (inbox-cases.ts).
    const pair = many.get(userId);
    const got = JSON.stringify(pair && { unread: pair.unread, unseen: pair.unseen });
    if (got !== JSON.stringify(own))
      found.push(`${userId}: countInboxes ${got}, own counts ${JSON.stringify(own)}`);
    if (got !== JSON.stringify(modelled))
      found.push(`${userId}: countInboxes ${got}, reference tray ${JSON.stringify(modelled)}`);
  }
  return found;
}
