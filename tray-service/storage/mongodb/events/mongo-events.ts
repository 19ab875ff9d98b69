import type { Db } from 'mongodb';
import { EVENTS } from '../collections/collection-names.ts';
import { type StoredEventDoc, type EventDoc } from '../collections/events-collection.ts';
import { RESTATABLE_STATUSES, type StoredEvent } from '../../../domain/stored-event.ts';
import type { EventsPort } from '../../port.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { createEventRollups } from './event-rollups.ts';
import { createEventsQueries } from './event-reads.ts';
import { eventDocument, OUTCOME_FIELDS, outcomeFields } from './event-document.ts';
import { fitsDocument, payloadKept } from './within-document-limit.ts';
import { storableJson } from '../../../domain/storable-json.ts';
import { payloadOf } from './escaped-keys.ts';
import { streamEvents } from '../../stream-events.ts';
import { randomUUID } from 'node:crypto';

/** Said in `error` of an event restated without its post's activity, which would not fit. */
const POST_ACTIVITY_TOO_LARGE =
  "post's activity not kept, for a late join: too large for a MongoDB document beside the payload";

/** A stored event as the admin API sees it: the dedupe key as `key`, none of the storage fields. */
export function toStoredEvent(doc: StoredEventDoc | EventDoc): StoredEvent {
  const extra: Partial<EventDoc> = doc;
  return {
    key: doc._id,
    event: doc.event,
    data: payloadOf(doc),
    webhook: doc.webhook,
    receivedAt: doc.receivedAt,
    storedAt: doc.storedAt,
    expiresAt: doc.expiresAt,
    status: doc.status,
    ...(doc.error === undefined ? {} : { error: doc.error }),
    ...(extra.userId === undefined ? {} : { userId: extra.userId }),
    ...(extra.communityId === undefined ? {} : { communityId: extra.communityId }),
    ...(extra.moderation === undefined || extra.moderation === 'none'
      ? {}
      : { moderation: extra.moderation }),
    ...(extra.appliedAt === undefined ? {} : { appliedAt: extra.appliedAt }),
  };
}

/**
 * Takes a count's token off its minute, once its event is marked counted: only the call that
 * stored the event (or made its applied mark) does. A retry finishing a count an earlier attempt
 * left leaves its token, as does a take-off that fails: a token only keeps that very count from
 * being made again, and goes with its minute's document. Once it is gone, only an attempt for the
 * same event that read the pending mark before and stalled until then could count it again (bull
 * runs one job per key at a time). A failure here is not the job's: failing it would lose what
 * the job says once (its retry's mark is not the first).
 */
async function released(release: () => Promise<void>): Promise<void> {
  await release().catch(() => undefined);
}

/** The storage port's events on MongoDB (`events`, the dedupe key as `_id`), with their per-minute rollups. */
export function createMongoEvents(db: Db, clock: () => Date = () => new Date()): EventsPort {
  const queries = createEventsQueries(db, clock);
  const rollups = createEventRollups(db, clock);
  const list: EventsPort['list'] = async (filter, limit, after, options) => {
    const page = await queries.list(filter, limit, after, options);
    return { items: page.items.map(toStoredEvent), ...(page.next ? { next: page.next } : {}) };
  };
  const events = db.collection<EventDoc>(EVENTS);
  async function get(key: string): Promise<StoredEvent | undefined> {
    const doc = await queries.get(key);
    return doc ? toStoredEvent(doc) : undefined;
  }
  /**
   * Counts a stored event into its minute's chart, then takes its `countPending` mark off: a step
   * that failed leaves the mark, and the job's retry (storing it again) takes it over and finishes
   * the count; the count is made once whatever is repeated (event-rollups.ts). `mark`: the mark this
   * call holds. `stored`: this call stored the event: its token is released only then, and only
   * when its own mark came off (no one took it over), so a token goes only once nobody can still
   * make the count.
   */
  async function counted(doc: EventDoc, mark: string | true, stored: boolean): Promise<EventDoc> {
    await rollups.countStored(doc);
    const cleared = await events.updateOne(
      { _id: doc._id, storedAt: doc.storedAt, countPending: mark },
      { $unset: { countPending: '' } },
    );
    if (stored && cleared.modifiedCount === 1) await released(() => rollups.releaseStored(doc));
    const { countPending: _done, ...kept } = doc;
    return kept;
  }

  /**
   * Finishes a count another call's mark says is pending, by taking the mark over first: a call
   * that read the mark just before its maker took it off and released its token (a replay while
   * the event's job ran) finds it gone and counts nothing, where counting on would count twice.
   */
  async function finishedCount(held: EventDoc): Promise<EventDoc> {
    const seen = held.countPending;
    if (seen === undefined) return held;
    const mine = await takenOver({ _id: held._id, storedAt: held.storedAt }, 'countPending', seen);
    if (mine !== undefined) return counted(held, mine, false);
    // Taken off (counted) or over (being counted) by another call meanwhile.
    const { countPending: _other, ...kept } = held;
    return kept;
  }

  /**
   * Moves the pending mark `field` of the event `filter` names from `seen` to a new one of this
   * call's, which then finishes the count; undefined when another call took it off or over first.
   */
  async function takenOver(
    filter: Pick<EventDoc, '_id'> & Partial<Pick<EventDoc, 'storedAt' | 'appliedAt'>>,
    field: 'countPending' | 'lagPending',
    seen: string | true,
  ): Promise<string | undefined> {
    const mine = randomUUID();
    const taken = await events.updateOne({ ...filter, [field]: seen }, { $set: { [field]: mine } });
    return taken.modifiedCount === 1 ? mine : undefined;
  }

  /**
   * The applied mark an earlier call left with its lag uncounted, taken over by this one (as a
   * stored event's count is: finishedCount), with the time that call stored; undefined when none
   * is pending, or another call took it first.
   */
  async function resumedLag(
    key: string,
    appliedAt: Date,
  ): Promise<{ doc: EventDoc; mark: string } | undefined> {
    const pending = await events.findOne({
      _id: key,
      lagPending: { $exists: true },
      expiresAt: { $gt: appliedAt },
    });
    if (!pending?.appliedAt || pending.lagPending === undefined) return undefined;
    const mark = await takenOver(
      { _id: key, appliedAt: pending.appliedAt },
      'lagPending',
      pending.lagPending,
    );
    return mark === undefined ? undefined : { doc: pending, mark };
  }

  return {
    async store(event, outcome, options) {
      const mark = randomUUID();
      // The call's own mark in place of `true`, outside the size check's sum (the later fields' room
      // holds it).
      const doc = {
        ...eventDocument(event, outcome, options.retentionDays, options.now),
        countPending: mark,
      };
      // An insert, not an upsert (FerretDB runs an upsert as a read and then a write): a duplicate
      // key says the event is stored already, and the first stored version is the one returned.
      const [duplicate] = await insertCoalesced<EventDoc>(db, EVENTS, [doc]);
      if (duplicate === undefined) return toStoredEvent(await counted(doc, mark, true));
      const held = await events.findOne({ _id: doc._id });
      // Gone between the two (the purge took it expired): the job's retry stores it anew.
      if (!held) throw new Error(`stored event ${doc._id} vanished while it was being stored`);
      if (held.expiresAt <= options.now) {
        // Expired, not yet purged: it counts as gone, and this delivery replaces it (as PostgreSQL's
        // upsert does), only while it is still expired, so of two replacing it at once one does.
        const replaced = await events.replaceOne({ _id: doc._id, expiresAt: { $lte: options.now } }, doc);
        if (replaced.matchedCount === 1) return toStoredEvent(await counted(doc, mark, true));
        const current = await events.findOne({ _id: doc._id });
        if (!current) throw new Error(`stored event ${doc._id} vanished while it was being stored`);
        return toStoredEvent(await finishedCount(current));
      }
      // A count an earlier attempt left unfinished is finished by this one (a retry of its job).
      return toStoredEvent(await finishedCount(held));
    },
    list,
    get,
    async restate(key, outcome, now) {
      const restatable = { $in: [...RESTATABLE_STATUSES] };
      const held = await events.findOne({ _id: key, status: restatable, expiresAt: { $gt: now } });
      // A payload replaced by its marker was judged from the payload: a replay reads the marker.
      if (!held || !payloadKept(held)) return get(key);
      const fields = storableJson(outcomeFields(outcome));
      const outcomeField = (name: string) => (OUTCOME_FIELDS as readonly string[]).includes(name);
      const kept = Object.fromEntries(Object.entries(held).filter(([name]) => !outcomeField(name)));
      // As withinDocumentLimit does when a post's activity is that large: stored without it, so
      // only a member joining late misses the post, and `error` says why.
      const { communityDay: _d, activityAt: _a, postActivity: _p, ...withoutPost } = fields;
      const set: Partial<EventDoc> = fitsDocument({ ...kept, ...fields })
        ? fields
        : { ...withoutPost, error: [fields.error, POST_ACTIVITY_TOO_LARGE].filter(Boolean).join('; ') };
      const unset = OUTCOME_FIELDS.filter((name) => set[name] === undefined);
      await events.updateOne(
        { _id: key, status: restatable, expiresAt: { $gt: now } },
        {
          $set: set,
          ...(unset.length > 0 ? { $unset: Object.fromEntries(unset.map((name) => [name, ''])) } : {}),
        },
      );
      return get(key);
    },
    stream: (filter, after) => streamEvents(list, filter, after),
    count: (filter, after, atMost) => queries.count(filter, after, atMost),
    async markApplied(event, appliedAt, by) {
      // Only the first mark matches (`appliedAt` absent), so only it counts into the histogram.
      // No projection: FerretDB 1.24's findAndModify refuses one.
      const mark = randomUUID();
      const before = await events.findOneAndUpdate(
        { _id: event.key, appliedAt: { $exists: false }, expiresAt: { $gt: appliedAt } },
        { $set: { appliedAt, lagPending: mark } },
      );
      // A mark whose count an earlier call left unfinished is finished by this one: it is still the
      // first, and its job announces it. Taken over first: a call that read the mark just before
      // its maker took it off and released its token finds it gone.
      const marked = before
        ? { doc: { ...before, appliedAt }, mark }
        : await resumedLag(event.key, appliedAt);
      const at = marked?.doc.appliedAt;
      // Made and settled by an earlier call of this maker, whose answer was lost: still the first.
      if (!marked || !at)
        return (
          by !== undefined &&
          (await events.countDocuments({ _id: event.key, appliedBy: by, lagPending: { $exists: false } })) ===
            1
        );
      await rollups.countApplied(marked.doc, at);
      // Whoever takes the pending mark off made the first mark: one call per event says true, and
      // its maker (none: any maker an earlier call left) is the one a lost answer's rerun matches.
      const settled = await events.updateOne(
        { _id: marked.doc._id, appliedAt: at, lagPending: marked.mark },
        by === undefined
          ? { $unset: { lagPending: '', appliedBy: '' } }
          : { $unset: { lagPending: '' }, $set: { appliedBy: by } },
      );
      // The token goes only with the maker's own mark: once that is off, nobody can count again.
      if (before && settled.modifiedCount === 1) await released(() => rollups.releaseApplied(marked.doc));
      return settled.modifiedCount === 1;
    },
    perMinute: (since, until) => rollups.perMinute(since, until),
    lagPerMinute: (since, until) => rollups.lagPerMinute(since, until),
  };
}
