import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { countsTowardSpanLimit, muteInForceAt, type Mute } from '../../../domain/mute.ts';
import { muteChangeTime, muteInForce, type MuteTarget } from '../../../domain/mute-changes.ts';
import type { InboxPort } from '../../port.ts';
import { TRAY_MUTES } from '../collections/collection-names.ts';
import { muteLockId, withWriteLock } from '../locks/write-lock.ts';
import { muteTargetKey, type MuteDoc } from '../collections/tray-mutes-collection.ts';

/** The latest time a Date holds: a span with no end yet is kept until it gets one. */
const NEVER = new Date(8_640_000_000_000_000);

/** A span that has not ended by `at` (no until or removal, or one after `at`), as a filter's `$and`. */
const notEndedBy = (at: number) => [
  { $or: [{ until: null }, { until: { $gt: at } }] },
  { $or: [{ removedAt: null }, { removedAt: { $gt: at } }] },
];

const spanId = (mute: Pick<Mute, 'userId' | 'targetType' | 'targetId' | 'createdAt'>) =>
  JSON.stringify([mute.userId, mute.targetType, mute.targetId, mute.createdAt]);

/** A stored span as the port hands it out, field by field. */
const toMute = (doc: MuteDoc): Mute => ({
  userId: doc.userId,
  targetType: doc.targetType,
  targetId: doc.targetId,
  createdAt: doc.createdAt,
  until: doc.until,
  removedAt: doc.removedAt,
});

/**
 * Mutes in tray_mutes, one document per span (tray-mutes-collection.ts). PUT and DELETE read the
 * user's spans of the target (a handful) and decide by the domain's rules (mute-changes.ts) which
 * span to change or start; each write is one command on `_id`. Both run under the user's mute lock
 * (mute-lock.ts), so each reads and writes with no other PUT or DELETE of the user in between: a PUT
 * counts the mutes in force against the limit with no other PUT writing, two PUTs of one target
 * never both start a span, and a DELETE is never undone. Without the lock a PUT that read the span
 * in force before a DELETE ended it wrote it back whole with no removal, and on FerretDB, whose
 * `$set` writes back the whole document it read, a DELETE wrote back the `until` a PUT had just
 * changed; a write conditional on the span read would not help there either (not atomic on FerretDB).
 */
export function createMongoMutes(db: Db): Pick<InboxPort, 'putMute' | 'removeMute' | 'mutesInForce'> {
  const mutes = db.collection<MuteDoc>(TRAY_MUTES);
  const spanDocsOf = (userId: string, target: MuteTarget) =>
    mutes.find({ userId, targetType: target.targetType, targetId: target.targetId }).toArray();
  const spansOf = async (userId: string, target: MuteTarget) =>
    (await spanDocsOf(userId, target)).map(toMute);
  // No later than NEVER: past it a Date is invalid, which the driver writes as the epoch, and the
  // purge would take the span at once.
  const keptUntil = (end: number | null, retentionDays: number) =>
    end === null ? NEVER : new Date(Math.min(end + retentionDays * DAY_MS, NEVER.getTime()));
  // Judged by the server too: ended spans stay while a record of the user counts from before their
  // end, so the user's spans grow with their history, and each GET or PUT shipped them all. The
  // domain's rule below still decides.
  const mutesInForce = async (userId: string, now: number) => {
    const spans = await mutes
      .find({
        userId,
        createdAt: { $lte: now },
        $and: notEndedBy(now),
      })
      .sort({ createdAt: 1, targetType: 1, targetId: 1 })
      .toArray();
    return spans.map(toMute).filter((mute) => muteInForceAt(mute, now));
  };

  return {
    putMute(
      userId,
      target,
      until,
      requestedAt,
      retentionDays,
      maxInForce,
      maxSpansPerTarget = Infinity,
      maxSpansPerUser = Infinity,
    ) {
      return withWriteLock(db, muteLockId(userId), async () => {
        const docs = await spanDocsOf(userId, target);
        // Never before the target's latest change (a request that waited for the lock).
        const spans = docs.map(toMute);
        const now = muteChangeTime(spans, target, requestedAt);
        const current = muteInForce(spans, target, now);
        // Counted under the user's lock: no other PUT of the user writes until this one has.
        if (!current && (await mutesInForce(userId, now)).length >= maxInForce) return 'too many';
        // In force or ended within the retention (not every span stored: see the domain's rule).
        const keepMs = retentionDays * DAY_MS;
        const counted = docs.filter((doc) => countsTowardSpanLimit(doc, now, keepMs));
        if (!current && counted.length >= maxSpansPerTarget) return 'too many spans';
        // The user's spans of any targets in force or ended within the retention, by their end
        // (until or removal, whichever came first), counted up to the limit: not by their expiry,
        // which the purge moves past the retention while a record of the user counts from before
        // the end (countsTowardSpanLimit).
        const endedBefore = now - keepMs;
        if (
          !current &&
          Number.isFinite(maxSpansPerUser) &&
          (await mutes.countDocuments(
            { userId, $and: notEndedBy(endedBefore) },
            { limit: maxSpansPerUser },
          )) >= maxSpansPerUser
        )
          return 'too many user spans';
        // The span in force gets the new end (its start stays); without one a new span starts now,
        // replacing one removed at this very millisecond (the span goes on).
        const mute: Mute = current
          ? { ...current, until }
          : { userId, ...target, createdAt: now, until, removedAt: null };
        await mutes.replaceOne(
          { _id: spanId(mute) },
          {
            ...mute,
            target: muteTargetKey(mute.targetType, mute.targetId),
            expiresAt: keptUntil(until, retentionDays),
          },
          { upsert: true },
        );
        return mute;
      });
    },

    removeMute(userId, target, requestedAt, retentionDays) {
      return withWriteLock(db, muteLockId(userId), async () => {
        const spans = await spansOf(userId, target);
        const now = muteChangeTime(spans, target, requestedAt);
        const ended = spans.filter(
          (mute) => mute.targetType === target.targetType && muteInForceAt(mute, now),
        );
        for (const mute of ended)
          await mutes.updateOne(
            { _id: spanId(mute) },
            { $set: { removedAt: now, expiresAt: keptUntil(now, retentionDays) } },
          );
        return ended.length > 0;
      });
    },

    mutesInForce,
  };
}
