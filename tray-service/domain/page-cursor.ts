import { z } from 'zod';
import { InvalidCursorError } from './invalid-cursor-error.ts';

/**
 * The cursors of keyset pages handed to clients: where the next page of a list starts. Every one
 * is opaque to clients (base64url JSON), so a key's shape can change without breaking them, and one
 * that no page handed out is an InvalidCursorError. (A live stream's position is another thing,
 * with its own format: live/stream-cursor.ts.)
 */

/** The sort key of the last item of a page: (time desc, id desc) makes a total order. */
export interface PageKey {
  at: Date;
  id: string;
}

const pageKeyShape = z.object({ t: z.number().int(), k: z.string() });
const userIdShape = z.object({ u: z.string() });
const recordShape = z.object({ u: z.string(), r: z.string() });

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

/** A page of a time-ordered list (events, decisions) continues after this key. */
export function encodeCursor(key: PageKey): string {
  return encode({ t: key.at.getTime(), k: key.id });
}

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
