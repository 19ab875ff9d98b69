import { BSON } from 'mongodb';
import type { EventDoc } from '../collections/events-collection.ts';

/**
 * MongoDB's document limit: 16 MiB of BSON, on every server version (FerretDB's too). The driver
 * sends only a document smaller than that.
 */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/**
 * Room kept in every stored event for what its job writes into it later: the applied mark and its
 * pending lag count (about 30 bytes), a more severe moderation outcome (a few). MongoDB refuses an
 * update whose result passes the limit, so without it an event stored just under the limit could
 * never be marked applied and its job would fail on every attempt. A kilobyte leaves room for a
 * field or two more.
 */
export const LATER_FIELDS_BYTES = 1024;

/** Whether a document leaves its later fields room under the limit. */
export const fitsDocument = (value: object) =>
  BSON.calculateObjectSize(value) + LATER_FIELDS_BYTES < MAX_DOCUMENT_BYTES;

/** Why `data` holds a marker (docs/storage.md#events-too-large-for-a-document). */
export const PAYLOAD_NOT_KEPT = 'larger than a MongoDB document may be';

/** Whether a stored event holds its payload, not the marker withinDocumentLimit put in its place. */
export function payloadKept(doc: Pick<EventDoc, 'data'>): boolean {
  const marker = doc.data.payloadNotKept;
  return !(
    typeof marker === 'object' &&
    marker !== null &&
    'reason' in marker &&
    marker.reason === PAYLOAD_NOT_KEPT
  );
}

/**
 * `doc` as MongoDB can hold it. A webhook body may be up to WEBHOOK_MAX_BODY_BYTES (64 MB at most),
 * and JSON grows in BSON (an array of numbers about sixfold: a type byte, the index as a key and
 * 8 bytes a number), so an acknowledged event may make a document no MongoDB server accepts; its
 * job would then fail on every attempt and every replay. Such an event is stored all the same, with
 * `data` replaced by a marker saying so and how large the payload was, and `error` saying why;
 * everything else is kept as it came: status (the tray did apply it), subject, times, and a post's
 * activity for a late join (docs/storage.md#events-too-large-for-a-document). Pure.
 */
export function withinDocumentLimit(doc: EventDoc): EventDoc {
  if (fitsDocument(doc)) return doc;
  const bsonBytes = BSON.calculateObjectSize(doc.data);
  const why = `payload not kept: ${bsonBytes} bytes of BSON, too large for a MongoDB document (under ${MAX_DOCUMENT_BYTES} bytes)`;
  // The marker is not escaped: it is read as it is.
  const { keysEscaped: _escaped, ...kept } = doc;
  const marked: EventDoc = {
    ...kept,
    data: { payloadNotKept: { reason: PAYLOAD_NOT_KEPT, bsonBytes } },
    error: doc.error === undefined ? why : `${doc.error}; ${why}`,
  };
  if (fitsDocument(marked)) return marked;
  // Its post's activity is that large as well (a name of many megabytes): the event is still
  // stored, and only a member joining late misses that post.
  const bare: EventDoc = { ...marked, error: `${marked.error}; nor its post's activity, for a late join` };
  delete bare.postActivity;
  delete bare.communityDay;
  delete bare.activityAt;
  return bare;
}
