import { AppError } from '../../shared/errors/app-error.ts';

/** A page of user ids continues after this id; opaque to clients (base64url JSON), like every cursor here. */
export function encodeUserCursor(userId: string): string {
  return Buffer.from(JSON.stringify({ u: userId })).toString('base64url');
}

export function decodeUserCursor(cursor: string): string {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const userId = (parsed as { u?: unknown } | null)?.u;
    if (typeof userId === 'string') return userId;
  } catch {
    // Falls through to the 400.
  }
  throw new AppError('VALIDATION', 'cursor: not a cursor this API returned');
}
