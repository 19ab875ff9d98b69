import { createHash } from 'node:crypto';

/**
 * How far back a reconnect looks before its cursor's time: a record's `changedAt` is stamped by
 * the writer before its write lands, so records of concurrent writers can become visible out of
 * order by up to the time a write takes. Records inside this window are told apart by the versions
 * the cursor lists (docs/live-tray.md, "Event ids").
 */
export const SETTLE_MS = 5_000;

/** Versions a cursor carries at most; beyond, a reconnect may repeat a record (never lose one). */
export const MAX_SEEN = 64;

/** The pseudo record id of a delete-all; its version is the time of the clear. */
export const CLEARED_ID = '#cleared';

/**
 * What a stream has delivered: everything changed at or before `at - SETTLE_MS` or at or before
 * `floor`, and within the window the versions in `seen` (keyed by a short hash of the record id).
 */
export interface StreamCursor {
  at: number;
  /** A new stream starts from "now": the client read its history itself (0 when unset). */
  floor: number;
  seen: Map<string, { version: number; changedAt: number }>;
}

const HASH_LENGTH = 8;
const TOKEN = /^([A-Za-z0-9_-]{8})([0-9a-z]{1,11})$/;
const AT = /^([0-9a-z]{1,11})(?:~([0-9a-z]{1,11}))?$/;

/** 48 bits of the id's SHA-256: only the records of one user inside one window are compared. */
export function recordHash(recordId: string): string {
  return createHash('sha256').update(recordId).digest('base64url').slice(0, HASH_LENGTH);
}

/** The cursor of a new stream: nothing before `now` is owed to it. */
export function freshCursor(now: number): StreamCursor {
  return { at: now, floor: now, seen: new Map() };
}

/** Whether the stream already delivered this record at this version or a newer one. */
export function hasSeen(cursor: StreamCursor, recordId: string, version: number): boolean {
  const seen = cursor.seen.get(recordHash(recordId));
  return seen !== undefined && seen.version >= version;
}

/** Records one delivered state; the window follows the newest time delivered. */
export function markSeen(cursor: StreamCursor, recordId: string, version: number, changedAt: number): void {
  cursor.at = Math.max(cursor.at, changedAt);
  const hash = recordHash(recordId);
  cursor.seen.delete(hash); // re-inserted last: the map stays in delivery order
  cursor.seen.set(hash, { version, changedAt });
  for (const [key, entry] of cursor.seen) {
    if (inWindow(cursor, entry.changedAt) && cursor.seen.size <= MAX_SEEN) break;
    cursor.seen.delete(key);
  }
}

/** Whether a state changed at `changedAt` may be one the cursor has not delivered. */
export function inWindow(cursor: StreamCursor, changedAt: number): boolean {
  return changedAt > Math.max(cursor.floor, cursor.at - SETTLE_MS);
}

/**
 * The SSE `id:` of a cursor: base-36 time (and `~floor` while the floor is inside the window),
 * then `.hash+version` per state inside the window.
 */
export function encodeStreamCursor(cursor: StreamCursor): string {
  let id = cursor.at.toString(36);
  if (cursor.floor > cursor.at - SETTLE_MS) id += `~${cursor.floor.toString(36)}`;
  for (const [hash, entry] of cursor.seen) {
    if (inWindow(cursor, entry.changedAt)) id += `.${hash}${entry.version.toString(36)}`;
  }
  return id;
}

/** The cursor of an id this service sent, or undefined for anything else. */
export function decodeStreamCursor(id: string): StreamCursor | undefined {
  const [head, ...tokens] = id.split('.');
  const times = AT.exec(head ?? '');
  if (!times?.[1] || tokens.length > MAX_SEEN) return undefined;
  const at = parseInt(times[1], 36);
  const cursor: StreamCursor = { at, floor: times[2] ? parseInt(times[2], 36) : 0, seen: new Map() };
  for (const token of tokens) {
    const match = TOKEN.exec(token);
    if (!match?.[1] || !match[2]) return undefined;
    // The exact change times are not in the id; the cursor's time keeps them in the window.
    cursor.seen.set(match[1], { version: parseInt(match[2], 36), changedAt: cursor.at });
  }
  return cursor;
}
