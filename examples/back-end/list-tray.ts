import { SignJWT } from 'jose';
// In your own back end: import { createTrayClient, ... } from '@webhook-tray-kit/client';
import { createTrayClient, type NotificationRecord } from '../../client/src/index.ts';

export interface ListTrayOptions {
  /** The tray service, e.g. http://127.0.0.1:8081. */
  trayUrl: string;
  /** The key the tray service verifies tokens with (its JWT_SECRET); it never leaves the back end. */
  jwtSecret: string;
  userId: string;
  /** How many records, newest first (default 20). */
  limit?: number;
  locale?: string;
}

export interface TrayListing {
  totalUnreadCount: number;
  records: NotificationRecord[];
}

/**
 * What an app's back end does to show a user their tray: sign a short-lived token for the user
 * (the tray service trusts the token's `sub`, so only the back end holds the key), then read the
 * unread count and the newest records through the client, which follows the pages.
 */
export async function listTray(options: ListTrayOptions): Promise<TrayListing> {
  const key = new TextEncoder().encode(options.jwtSecret);
  const tray = createTrayClient({
    baseUrl: options.trayUrl,
    // Asked before every call: signing is cheap; a back end that fetches its tokens would cache them.
    getToken: () =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(options.userId)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(key),
    ...(options.locale ? { locale: options.locale } : {}),
  });
  const { totalUnreadCount } = await tray.counts();
  const limit = options.limit ?? 20;
  const records: NotificationRecord[] = [];
  if (limit < 1) return { totalUnreadCount, records };
  for await (const record of tray.history()) {
    records.push(record);
    // As soon as the last record wanted is in: history() fetches a page when the loop asks for its
    // first record, so checking before the push would fetch a page that is never shown.
    if (records.length >= limit) break;
  }
  return { totalUnreadCount, records };
}
