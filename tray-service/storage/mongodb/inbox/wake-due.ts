import type { Db } from 'mongodb';
import type { InboxRecord } from '../../../domain/inbox-record.ts';
import { wake } from '../../../domain/snooze-mark.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { casUpdateRecords } from '../compare-and-set/cas-update-records.ts';
import { claimOwner } from '../compare-and-set/claim-owner.ts';
import { collectChanged } from '../compare-and-set/collect-changed.ts';
import { markClock } from '../../mark-clock.ts';
import type { TellStored } from '../../port.ts';
import { toInboxRecord } from '../records/to-tray-record.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { withInboxChange } from '../records/with-inbox-change.ts';

/** Batches read before giving up on a wake-up that keeps losing every record to other processes. */
const MAX_READS = 20;

/**
 * The snooze wake-up (docs/storage.md#the-inbox): reads the due records by the `snooze_due` index
 * (box `snoozed`, snoozedUntil <= now, oldest end first) and wakes them through the compare-and-set.
 * That is the claim: two processes reading the same due records both try to claim each one's next
 * version, one wins it and wakes it, and the other leaves it to that one (`leaveHeld`), so each
 * record is woken once; a record whose claim's writer stopped before writing waits for the claim's
 * takeover without holding back the records due after it. A batch whose records other processes took is followed
 * by the next due ones, so a short answer still means that no more are due. Records that expired
 * while snoozed are left to the TTL index (few: snoozed past the end of their retention).
 */
export async function wakeDue(
  db: Db,
  now: number,
  limit: number,
  tell?: TellStored<InboxRecord>,
): Promise<InboxRecord[]> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const woken: InboxRecord[] = [];
  // Due records another writer holds a claim on, left to it (or to the next wake-up, should that
  // writer have stopped between claim and write: the claim's takeover frees it). Read past here,
  // so they never hold back the records due after them.
  const held = new Set<string>();
  // A round of many rereads on a slow server stamps its later records near when they are stored.
  const clock = markClock(now);
  // A failure after some records woke: those go out with it, to be announced.
  return collectChanged(woken, async () => {
    for (let reads = 0; reads < MAX_READS && woken.length < limit; reads++) {
      const wanted = limit - woken.length;
      const asked = wanted + held.size;
      const read = await records
        .find({ box: 'snoozed', snoozedUntil: { $lte: now }, expiresAt: { $gt: new Date(now) } })
        .sort({ snoozedUntil: 1, _id: 1 })
        .limit(asked)
        .toArray();
      // At most `wanted`: a held record woken by its holder since is no longer read, and the one
      // more asked for it would wake past the limit (a wake-up coming back over full ends the
      // loop's round early, as if nothing more were due).
      const due = read.filter((record) => !held.has(record._id)).slice(0, wanted);
      const { left } = await casUpdateRecords(
        db,
        due.map((record) => record._id),
        (_key, current) => (current ? withInboxChange(current, wake(current, now)) : 'unchanged'),
        {
          owner: claimOwner(),
          now: clock,
          first: new Map(due.map((record) => [record._id, record])),
          // Each bulk told once stored: a round that waits for other writers' claims stamps its
          // later records later (markClock), and its first ones must not wait for those.
          onWritten: async (docs) => {
            const part = docs.map(toInboxRecord);
            woken.push(...part);
            if (tell) await tell(part);
          },
          leaveHeld: true,
        },
      );
      for (const key of left) held.add(key);
      if (read.length < asked) break;
    }
  });
}
