import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error.ts';

/** The sort key of the last item of a page: (time desc, id desc) makes a total order. */
export interface PageKey {
  at: Date;
  id: string;
}

const cursorShape = z.object({ t: z.number().int(), k: z.string() });

/** Opaque to clients (base64url JSON), so the key's shape can change without breaking them. */
export function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify({ t: key.at.getTime(), k: key.id })).toString('base64url');
}

export function decodeCursor(cursor: string): PageKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const result = cursorShape.safeParse(parsed);
  if (!result.success) throw new AppError('VALIDATION', 'cursor: not a cursor this API returned');
  return { at: new Date(result.data.t), id: result.data.k };
}
