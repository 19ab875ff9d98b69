import { createHash } from 'node:crypto';
import { z } from 'zod';
import { compareCodePoints } from './code-point-order.ts';
import { InvalidCursorError } from './invalid-cursor-error.ts';
import { storableText } from './stored-text.ts';

/**
 * The cursors of keyset pages handed to clients: where the next page of a list starts. Every one
 * is opaque to clients (base64url JSON), so a key's shape can change without breaking them, and one
 * that no page handed out, or one a list's page handed out for another list or filter, is an
 * InvalidCursorError. (A live stream's position is another thing,
 * with its own format: live/stream-cursor.ts.)
 */

/** The sort key of the last item of a page: (time desc, id desc) makes a total order. */
export interface PageKey {
  at: Date;
  id: string;
}

/**
 * The times a cursor may carry: what both a JS Date (±8.64e15 ms) and PostgreSQL's timestamptz
 * (from 4713-11-24 BC, Julian day 0) hold. A crafted time outside would make an Invalid Date or
 * fail the query; every time a page hands out is well inside.
 */
const EARLIEST_MS = -210_866_803_200_000;
const LATEST_MS = 8_640_000_000_000_000;

/** A cursor's ids and keys go into the query as they are, so they are storable text too. */
const part = () => storableText(z.string());

const pageKeyShape = z.object({ t: z.number().int().min(EARLIEST_MS).max(LATEST_MS), k: part() });
const userIdShape = z.object({ u: part() });
const recordShape = z.object({ u: part(), r: part() });

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function decode<T>(cursor: string, shape: z.ZodType<T>): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const result = shape.safeParse(parsed);
  if (!result.success) throw new InvalidCursorError('cursor');
  return result.data;
}

/** The time-ordered lists a cursor continues: GET /admin/events and /admin/moderation/decisions. */
export const pagedLists = ['events', 'decisions'] as const;
export type PagedList = (typeof pagedLists)[number];

/**
 * What a cursor of a time-ordered list was made for: the list, and the filter its pages had (as
 * the route parsed it, without `cursor` and `limit`). A key is only a position in that order: used
 * with another filter it would page on from there (that filter's newer events skipped, unseen),
 * and on another list it would mean nothing, so either is refused.
 */
export interface CursorScope {
  list: PagedList;
  filter: object;
}

const listCursorShape = pageKeyShape.extend({ l: z.enum(pagedLists), f: z.string() });

/**
 * The filter's fingerprint: its values in key order (a Date as its ISO string, so `2026-11-20` and
 * `2026-11-20T00:00:00Z` are one filter), hashed short, as a cursor carries it.
 */
function filterHash(filter: object): string {
  const entries = Object.entries(filter)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => compareCodePoints(a, b));
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 16);
}

/** A page of a time-ordered list continues after this key, with the scope it was made for. */
export function encodeListCursor(key: PageKey, scope: CursorScope): string {
  return encode({ l: scope.list, f: filterHash(scope.filter), t: key.at.getTime(), k: key.id });
}

/** The key of a cursor encodeListCursor made for this same scope; else an InvalidCursorError. */
export function decodeListCursor(cursor: string, scope: CursorScope): PageKey {
  const { l, f, t, k } = decode(cursor, listCursorShape);
  if (l !== scope.list)
    throw new InvalidCursorError('cursor', `made for another list (${l}), not for ${scope.list}`);
  if (f !== filterHash(scope.filter)) {
    throw new InvalidCursorError(
      'cursor',
      'made for another filter; send the filter of the page that handed it out, or leave cursor out to start again',
    );
  }
  return { at: new Date(t), id: k };
}

/**
 * The key a cursor holds, whatever list or filter it was made for: the routes decode with
 * decodeListCursor, which refuses one made for another.
 */
export function decodeCursor(cursor: string): PageKey {
  const { t, k } = decode(cursor, pageKeyShape);
  return { at: new Date(t), id: k };
}

/** A page of user ids (an event's recipients) continues after this id. */
export function encodeUserCursor(userId: string): string {
  return encode({ u: userId });
}

export function decodeUserCursor(cursor: string): string {
  return decode(cursor, userIdShape).u;
}

/** Where a page of a user's records continues (the records a removal changed, in (user, key) order). */
export interface RecordPosition {
  userId: string;
  key: string;
}

export function encodeRecordCursor(position: RecordPosition): string {
  return encode({ u: position.userId, r: position.key });
}

export function decodeRecordCursor(cursor: string): RecordPosition {
  const { u, r } = decode(cursor, recordShape);
  return { userId: u, key: r };
}
