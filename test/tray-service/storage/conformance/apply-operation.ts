import { createHash } from 'node:crypto';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import type { TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import type { TrayStorage, WriteContext } from '../../../../tray-service/storage/port.ts';
import { applyInboxOperation } from './inbox-operation.ts';

/** Days records and events live in the conformance cases (TRAY_RETENTION_DAYS, EVENTS_RETENTION_DAYS). */
export const RETENTION_DAYS = 90;

/**
 * A community post's event as the platform sends it (docs/contract.md#postdidcreate), built from
 * the activity it maps to, so an adapter that re-reads stored events for a late join finds the
 * same post the fan-out had.
 */
export function postEvent(post: Activity) {
  const { actor } = post;
  return {
    event: 'post.didCreate',
    data: {
      post: {
        postId: post.lastActionId,
        postedUserId: actor.userId,
        targetType: 'community',
        targetId: post.targetId,
        createdAt: new Date(post.at).toISOString(),
        mentionees: [],
      },
      community: { communityId: post.targetId, displayName: post.targetName },
      users: [
        {
          userId: actor.userId,
          displayName: actor.name,
          ...(actor.imageUrl === undefined ? {} : { avatarFileUrl: actor.imageUrl }),
          ...(actor.avatarCustomUrl === undefined ? {} : { avatarCustomUrl: actor.avatarCustomUrl }),
        },
      ],
    },
  };
}

/** The receiver's dedupe key of a post's event: one key per post, so a redelivery is stored once. */
export function postEventKey(post: Activity): string {
  return createHash('sha256')
    .update(JSON.stringify([post.targetId, post.lastActionId]))
    .digest('hex');
}

/**
 * Stores community posts' events as the worker does before their fan-out (with each post, for late
 * joins); storing one again changes nothing.
 */
export async function storePostEvents(
  storage: TrayStorage,
  communityId: string,
  posts: readonly Activity[],
  now: number,
): Promise<void> {
  for (const post of posts) {
    await storage.events.store(
      { key: postEventKey(post), ...postEvent(post), webhook: 'conformance', receivedAt: new Date(now) },
      { status: 'applied', communityPost: { communityId, at: post.at, activity: post } },
      { retentionDays: RETENTION_DAYS, now: new Date(now) },
    );
  }
}

/**
 * Applies one operation of the reference tray through the storage port, as the worker and the
 * tray API do: a community post's event is stored (with the post, for late joins) before its
 * fan-out; a delete-all removes the records and records the clear time.
 */
export async function applyOperation(
  storage: TrayStorage,
  operation: TrayOperation,
  write: (now: number) => WriteContext,
): Promise<void> {
  const { now } = operation;
  switch (operation.kind) {
    case 'personal':
      return storage.writes.applyPersonal(operation.activities, write(now));
    case 'posts':
      await storePostEvents(storage, operation.communityId, operation.posts, now);
      return storage.writes.fanOutPosts(operation.communityId, operation.posts, write(now));
    case 'membership':
      return storage.writes.applyMemberships(operation.changes, write(now));
    case 'deleteProfile':
      return storage.writes.applyProfiles(
        [{ userId: operation.userId, displayName: 'Deleted user', deleted: true, at: operation.at }],
        write(now),
      );
    case 'markRead':
      await storage.records.markRead(operation.userId, operation.verb, operation.targetId, now);
      return;
    case 'markAllRead':
      await storage.records.markAllRead(operation.userId, now);
      return;
    case 'lastRead':
      await storage.lastRead.record(operation.userId, now);
      // Seeing what it stops counting is part of the inbox (absent on adapters without it).
      if (storage.inbox) await storage.inbox.seeThrough(operation.userId, now);
      return;
    case 'deleteAll':
      await storage.records.deleteAll(operation.userId);
      return storage.clears.record(operation.userId, now);
    case 'removal':
      // Only cases that need the removals capability make removals (conformance-adapters.ts).
      return storage.writes.applyRemovals(operation.removals, write(now));
    default:
      await applyInboxOperation(storage, operation, write(now).onWritten ?? (async () => undefined));
  }
}
