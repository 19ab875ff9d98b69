import request from 'supertest';
import type { NotificationRecord } from '../../../../tray-service/http/to-notification-record.ts';
import { bearer } from '../../api/support/api-harness.ts';
import { commentEvent, minute } from '../../worker/event-builder.ts';
import { dataOf, type SseEvent } from './sse-client.ts';

/**
 * A comment by u-cid on `owner`'s post `postId`: one `comment` record for the owner. Its id names the
 * owner, and each test's post is its own: a deleted comment's id stays deleted, and a post's comments
 * reach its owner.
 */
export const commentOn = (owner: string, postId: string, at: number) =>
  commentEvent({
    postId,
    postOwner: owner,
    author: 'u-cid',
    commentId: `cm-${owner}-${at}`,
    createdAt: minute(at),
  });

/** What a client's list holds after these events, applied in order (docs/client.md). */
export function listAfter(events: readonly SseEvent[]): Set<string> {
  const ids = new Set<string>();
  for (const event of events) {
    if (event.event === 'record') ids.add(dataOf<NotificationRecord>(event).v_tarid_uid);
    if (event.event === 'removed') for (const id of dataOf<{ ids: string[] }>(event).ids) ids.delete(id);
    if (event.event === 'cleared') ids.clear();
  }
  return ids;
}

/** The keys of the user's first v3 history page, served by the API at `base`. */
export async function historyIds(base: string, user: string): Promise<Set<string>> {
  const page = await request(base)
    .get('/notifications/v3/history')
    .set('Authorization', await bearer(user));
  return new Set((page.body.data as NotificationRecord[]).map((record) => record.v_tarid_uid));
}
