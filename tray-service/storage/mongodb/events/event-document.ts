import { BSON } from 'mongodb';
import { communityDay } from '../collections/events-collection.ts';
import { eventExpiry } from '../../../domain/event-expiry.ts';
import { dayOf } from '../records/storage-keys.ts';
import type { EventOutcome, EventsPort } from '../../port.ts';
import { idWithinLimit } from '../../../domain/event-id.ts';
import type { EventDoc } from '../collections/events-collection.ts';
import { withinDocumentLimit } from './within-document-limit.ts';
import { storableJson } from '../../../domain/storable-json.ts';
import { escapeKeys, hasRefusedKey } from './escaped-keys.ts';

/**
 * The stored document of a delivery and its outcome, as MongoDB can hold it: U+0000 and lone
 * surrogates replaced (domain/storable-json.ts), keys no field name may be escaped
 * (escaped-keys.ts), and a payload too large for a document replaced by a marker
 * (within-document-limit.ts), and marked as not yet counted in the chart (`countPending`), with
 * the size of its payload as stored (`bytes`). Pure.
 */
export function eventDocument(
  /** A delivery as the storage port hands it over (the receiver's dedupe key as `key`). */
  event: Parameters<EventsPort['store']>[0],
  outcome: EventOutcome,
  retentionDays: number,
  now: Date,
): EventDoc {
  const expiresAt = eventExpiry(event.receivedAt, now, retentionDays);
  const keysEscaped = hasRefusedKey(event.data);
  const doc = withinDocumentLimit(
    storableJson<EventDoc>({
      _id: event.key,
      event: event.event,
      data: keysEscaped ? escapeKeys(event.data) : event.data,
      ...(keysEscaped ? { keysEscaped } : {}),
      webhook: event.webhook,
      receivedAt: event.receivedAt,
      storedAt: now,
      expiresAt,
      ...outcomeFields(outcome),
      moderation: 'none',
      // Until its count in the events-per-minute chart is made (mongo-events.ts).
      countPending: true,
    }),
  );
  return { ...doc, bytes: BSON.calculateObjectSize(doc.data) };
}

/** The fields an outcome sets in an event's document, each absent when it has none. */
export const OUTCOME_FIELDS = [
  'status',
  'error',
  'userId',
  'communityId',
  'communityDay',
  'activityAt',
  'postActivity',
] as const satisfies readonly (keyof EventDoc)[];

/**
 * What an outcome sets in an event's document: its verdict, the acting user and the community, and
 * a community post's day, time and activity (what a late join looks up). Pure.
 */
export function outcomeFields(outcome: EventOutcome): Pick<EventDoc, (typeof OUTCOME_FIELDS)[number]> {
  // A longer id (which no valid event names) would not fit its index on FerretDB: left out.
  const userId = idWithinLimit(outcome.userId);
  const communityId = idWithinLimit(outcome.communityId);
  const post = idWithinLimit(outcome.communityPost?.communityId) ? outcome.communityPost : undefined;
  return {
    status: outcome.status,
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    ...(userId === undefined ? {} : { userId }),
    ...(communityId === undefined ? {} : { communityId }),
    ...(post
      ? {
          communityDay: communityDay(post.communityId, dayOf(post.at)),
          activityAt: post.at,
          ...(post.activity ? { postActivity: post.activity } : {}),
        }
      : {}),
  };
}
