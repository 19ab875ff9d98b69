/**
 * The record's key, `v_tarid_uid` (docs/contract.md#tray-records): `<verb>_<targetId>_<userId>`.
 *
 * Ids may contain `_` themselves, so each part is escaped before joining: `%` becomes `%25` and
 * `_` becomes `%5F`. Two different (verb, target, user) triples therefore never share a key, and
 * the key of ids without `%` or `_` is exactly the contract's plain join, so clients that build
 * keys themselves from such ids keep working. Pure.
 */

export interface RecordIdentity {
  verb: string;
  targetId: string;
  userId: string;
}

function escapePart(part: string): string {
  return part.replace(/%/g, '%25').replace(/_/g, '%5F');
}

function unescapePart(part: string): string | undefined {
  // Only the two escapes this module writes are valid; anything else is not a key of ours.
  if (/%(?!25|5F)/.test(part)) return undefined;
  return part.replace(/%5F/g, '_').replace(/%25/g, '%');
}

export function encodeRecordKey(identity: RecordIdentity): string {
  return [identity.verb, identity.targetId, identity.userId].map(escapePart).join('_');
}

/** The triple a key names, or undefined when the text is not a key this module could have written. */
export function decodeRecordKey(key: string): RecordIdentity | undefined {
  const parts = key.split('_');
  if (parts.length !== 3) return undefined;
  const [verb, targetId, userId] = parts.map(unescapePart);
  if (verb === undefined || targetId === undefined || userId === undefined) return undefined;
  return { verb, targetId, userId };
}
