import { createHash } from 'node:crypto';
import { compareCodePoints } from '../domain/code-point-order.ts';

// The settle window is a domain fact: every writer must announce within it.
import { SETTLE_MS } from '../domain/settle-window.ts';

/**
 * How far ahead of this process's clock a cursor's time may be: its `at` is a change's time,
 * stamped by whichever process wrote it, so a writer's clock somewhat ahead (NTP keeps them within
 * milliseconds) still resumes. Further ahead the id is not one the service sent: resumed, its
 * catch-up would skip every change until that time.
 */
export const MAX_CLOCK_AHEAD_MS = 60_000;

/** Versions a cursor carries at most; beyond, a reconnect may repeat a record (never lose one). */
export const MAX_SEEN = 64;

/**
 * How far behind the clock a quiet stream's id is moved at its heartbeats. The id's time otherwise
 * moves only with what the stream delivers, and a stream quiet for a day would resume with `reset`
 * (reload everything) though it missed nothing. Everything changed before this long ago has been
 * delivered to a stream that was open and subscribed all along: a change is announced as it is
 * written, and one whose announcement was lost is made up for by a resync from its own time
 * (lost-changes.ts), whatever the cursor says.
 */
export const QUIET_MS = 60 * 60_000;

/** The pseudo record id of a delete-all; its version is the time of the clear. */
export const CLEARED_ID = '#cleared';

/**
 * What a stream has delivered: everything changed more than SETTLE_MS before the later of `at`
 * and `floor`, within that window the versions in `seen` (keyed by a short hash of the record id),
 * and every state at or before `through` in a catch-up's order.
 */
export interface StreamCursor {
  at: number;
  /**
   * A new stream starts from "now": the client read its history itself (0 when unset). Not from
   * `floor` itself: a state stamped up to SETTLE_MS before it may have landed after that read.
   */
  floor: number;
  /** `markOnly`: that state went out as a bare mark, the record itself not sent with it. */
  seen: Map<string, { version: number; changedAt: number; markOnly?: true }>;
  /**
   * How far a catch-up got in its pages' order (changedAt, then key in code point order): every
   * state up to this one was delivered. `seen` holds 64 states at most, and a catch-up of more
   * changed at one time (a mark-all-read of thousands) dropped midway would start again from its
   * first record without it, and never get further on a link too slow to take it whole.
   */
  through?: CatchUpPosition;
}

/** A state's place in a catch-up's order. */
export interface CatchUpPosition {
  changedAt: number;
  key: string;
}

const HASH_LENGTH = 8;
const TOKEN = /^([A-Za-z0-9_-]{8})([0-9a-z]{1,11})$/;
const AT = /^([0-9a-z]{1,11})(?:~([0-9a-z]{1,11}))?(?:!([0-9a-z]{1,11}):([A-Za-z0-9_-]{1,384}))?$/;

/** 48 bits of the id's SHA-256: only the records of one user inside one window are compared. */
export function recordHash(recordId: string): string {
  return createHash('sha256').update(recordId).digest('base64url').slice(0, HASH_LENGTH);
}

/**
 * The cursor of a new stream: nothing stamped more than SETTLE_MS before `now` is owed to it (its
 * client read that from history); a state stamped later may have landed after that read.
 */
export function freshCursor(now: number): StreamCursor {
  return { at: now, floor: now, seen: new Map() };
}

/**
 * A copy of the cursor as it is: what a catch-up compares with, so what it writes itself (and the
 * states that evicts from the cursor) never makes it skip or resend another record of its backlog.
 */
export function copyCursor(cursor: StreamCursor): StreamCursor {
  return {
    at: cursor.at,
    floor: cursor.floor,
    seen: new Map(cursor.seen),
    ...(cursor.through ? { through: cursor.through } : {}),
  };
}

/** Whether this state is at or before the place a catch-up got to (StreamCursor.through). */
export function passed(cursor: StreamCursor, key: string, changedAt: number): boolean {
  const { through } = cursor;
  if (!through || changedAt > through.changedAt) return false;
  return changedAt < through.changedAt || compareCodePoints(key, through.key) <= 0;
}

/**
 * Moves the catch-up's place to this state, taken in the pages' order once every state before it
 * was delivered. Only a state settled when its page was read (`settledBefore`: SETTLE_MS before
 * the read) moves it: a state stamped earlier than that may still land after the read.
 */
export function passThrough(cursor: StreamCursor, position: CatchUpPosition, settledBefore: number): void {
  if (position.changedAt > settledBefore) return;
  if (passed(cursor, position.key, position.changedAt)) return;
  cursor.through = { changedAt: position.changedAt, key: position.key };
}

/** The newest version of this record the cursor remembers delivering, if it remembers one. */
export function seenVersion(cursor: StreamCursor, recordId: string): number | undefined {
  return cursor.seen.get(recordHash(recordId))?.version;
}

/** Whether the stream already delivered this record at this version or a newer one. */
export function hasSeen(cursor: StreamCursor, recordId: string, version: number): boolean {
  return (seenVersion(cursor, recordId) ?? -Infinity) >= version;
}

/**
 * Whether a state changed at `changedAt` may be one the cursor has not delivered, where changes from
 * `lostFrom` on may never have been announced to the stream (a failed publish): inside the window,
 * or from then on back to SETTLE_MS before the floor (the client read what changed before that
 * from history itself; a state stamped later may have landed after that read, and only its
 * announcement, lost, would have brought it).
 */
export function mayOwe(cursor: StreamCursor, changedAt: number, lostFrom = Infinity): boolean {
  return inWindow(cursor, changedAt) || (changedAt >= lostFrom && changedAt > cursor.floor - SETTLE_MS);
}

/**
 * Whether the stream has delivered this state of the record, or its client has it otherwise: one
 * from before the window counts as delivered (read from history by the client, or sent live). The
 * window reaches back SETTLE_MS before the floor (inWindow): a state stamped just before the
 * opening may have landed after the client's read of history, and its announcement still be on
 * its way or lost; a bare mark would leave the client without the record and count it delivered.
 * Asked of the state a mark changed: counted undelivered, the stream answers the mark with a
 * catch-up, which sends the record with the mark in it (a client that had it merges it by key).
 */
export function hasDelivered(cursor: StreamCursor, recordId: string, changedAt: number): boolean {
  return (
    !inWindow(cursor, changedAt) ||
    hasSeen(cursor, recordId, changedAt) ||
    passed(cursor, recordId, changedAt)
  );
}

/**
 * Whether the newest state of this record the stream remembers sending went out as a bare mark: a
 * mark of a record whose earlier state was outside the window, counted delivered, though that
 * state's own announcement may have been lost. A resync making up for the loss sends the record.
 */
export function seenOnlyAsMark(cursor: StreamCursor, recordId: string): boolean {
  return cursor.seen.get(recordHash(recordId))?.markOnly === true;
}

/**
 * Records one delivered state; the window follows the newest time delivered. `markOnly`: it went
 * out as a bare mark (seenOnlyAsMark); a later state sent as a record clears that.
 */
export function markSeen(
  cursor: StreamCursor,
  recordId: string,
  version: number,
  changedAt: number,
  markOnly = false,
): void {
  cursor.at = Math.max(cursor.at, changedAt);
  const hash = recordHash(recordId);
  cursor.seen.delete(hash); // re-inserted last: the map stays in delivery order
  cursor.seen.set(hash, markOnly ? { version, changedAt, markOnly } : { version, changedAt });
  for (const [key, entry] of cursor.seen) {
    if (inWindow(cursor, entry.changedAt) && cursor.seen.size <= MAX_SEEN) break;
    cursor.seen.delete(key);
  }
}

/** Moves a quiet stream's cursor up to `quietMs` before `now`; true when it moved. */
export function advanceQuiet(cursor: StreamCursor, now: number, quietMs: number): boolean {
  const to = now - quietMs;
  if (cursor.at >= to) return false;
  cursor.at = to;
  return true;
}

/**
 * Whether a state changed at `changedAt` may be one the cursor has not delivered: stamped within
 * SETTLE_MS before the newest time delivered, or before the stream opened, or later. The window
 * reaches back from the opening too: a state stamped just before the stream opened may have
 * landed after its client read its history, and been announced while the client's connection was
 * down; the floor alone would count it delivered, and the client would never get it.
 */
export function inWindow(cursor: StreamCursor, changedAt: number): boolean {
  return changedAt > Math.max(cursor.floor, cursor.at) - SETTLE_MS;
}

/**
 * The longest id the service sends: what the stream's schema takes back as `?lastEventId=` or
 * `Last-Event-ID` (stream-schemas.ts). A client resuming with a longer one would be refused.
 */
export const MAX_EVENT_ID_LENGTH = 1_024;

/**
 * The longest record key an id carries as its catch-up place (base64url, about 4/3 of its UTF-8
 * bytes): past it the place is left out, and a reconnect may repeat what the catch-up sent.
 */
const MAX_THROUGH_KEY = 384;

/**
 * The SSE `id:` of a cursor: base-36 time (and `~floor` while the floor is inside the window, and
 * `!time:key` while a catch-up's place is, the key in base64url), then `.hash+version` per state
 * inside the window, oldest delivered first. Past MAX_EVENT_ID_LENGTH the oldest states are left
 * out (a reconnect may repeat them, never lose one).
 */
export function encodeStreamCursor(cursor: StreamCursor): string {
  let head = cursor.at.toString(36);
  if (cursor.floor > cursor.at - SETTLE_MS) head += `~${cursor.floor.toString(36)}`;
  const { through } = cursor;
  if (through && inWindow(cursor, through.changedAt)) {
    const key = Buffer.from(through.key).toString('base64url');
    if (key.length <= MAX_THROUGH_KEY) head += `!${through.changedAt.toString(36)}:${key}`;
  }
  const tokens: string[] = [];
  for (const [hash, entry] of cursor.seen) {
    if (inWindow(cursor, entry.changedAt)) tokens.push(`.${hash}${entry.version.toString(36)}`);
  }
  let length = head.length;
  let first = tokens.length;
  while (first > 0 && length + (tokens[first - 1]?.length ?? 0) <= MAX_EVENT_ID_LENGTH) {
    first -= 1;
    length += tokens[first]?.length ?? 0;
  }
  return head + tokens.slice(first).join('');
}

/**
 * A base-36 number of the id, or undefined past Number.MAX_SAFE_INTEGER: eleven digits reach
 * 36^11, and a number read back rounded would be encoded as another id than the one received.
 */
function base36(digits: string): number | undefined {
  const value = parseInt(digits, 36);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The cursor of an id this service sent, or undefined for anything else. */
export function decodeStreamCursor(id: string): StreamCursor | undefined {
  const [head, ...tokens] = id.split('.');
  const times = AT.exec(head ?? '');
  if (!times?.[1] || tokens.length > MAX_SEEN) return undefined;
  const at = base36(times[1]);
  const floor = times[2] ? base36(times[2]) : 0;
  if (at === undefined || floor === undefined) return undefined;
  const cursor: StreamCursor = { at, floor, seen: new Map() };
  if (times[3] && times[4]) {
    const throughAt = base36(times[3]);
    const key = Buffer.from(times[4], 'base64url').toString();
    // Sent only inside the window, so never after `at`; and an id read back encodes as received.
    if (throughAt === undefined || throughAt > at || Buffer.from(key).toString('base64url') !== times[4])
      return undefined;
    cursor.through = { changedAt: throughAt, key };
  }
  for (const token of tokens) {
    const match = TOKEN.exec(token);
    const version = match?.[2] ? base36(match[2]) : undefined;
    if (!match?.[1] || version === undefined) return undefined;
    // The exact change times are not in the id; the cursor's time keeps them in the window. Nor
    // is whether a state went out as a bare mark: each is taken for one (seenOnlyAsMark), so a
    // resync may send a record again, never leave one out.
    cursor.seen.set(match[1], { version, changedAt: cursor.at, markOnly: true });
  }
  return cursor;
}

/** Whether the cursor names a time this service cannot have sent yet at `now` (MAX_CLOCK_AHEAD_MS). */
export function isAheadOf(cursor: Pick<StreamCursor, 'at' | 'floor'>, now: number): boolean {
  return Math.max(cursor.at, cursor.floor) > now + MAX_CLOCK_AHEAD_MS;
}
