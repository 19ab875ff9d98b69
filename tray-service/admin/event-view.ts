import type { Activity } from '../domain/activity.ts';
import { toDecisionView } from '../domain/decision-doc.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { EventDetail } from '../use-cases/event-detail.ts';
import type { RemovalChangesSummary } from '../use-cases/removal-changes.ts';
import { encodeRecordCursor } from '../domain/page-cursor.ts';
import type { AdminEventView } from './api-schema/admin-outputs.ts';

/** What the admin API shows of a stored event: `key` is the receiver's dedupe key. */
export type EventView = AdminEventView;

/**
 * The expiry shown is the one storage holds, set from the EVENTS_RETENTION_DAYS in force when the
 * event was stored: reads and the purge go by it, whatever the retention is now.
 */
export function toEventView(event: StoredEvent): EventView {
  return {
    key: event.key,
    event: event.event,
    webhook: event.webhook,
    status: event.status,
    ...(event.error === undefined ? {} : { error: event.error }),
    ...(event.userId === undefined ? {} : { userId: event.userId }),
    ...(event.communityId === undefined ? {} : { communityId: event.communityId }),
    ...(event.moderation === undefined ? {} : { moderation: event.moderation }),
    receivedAt: event.receivedAt.toISOString(),
    storedAt: event.storedAt.toISOString(),
    ...(event.appliedAt === undefined ? {} : { appliedAt: event.appliedAt.toISOString() }),
    expiresAt: event.expiresAt.toISOString(),
    data: event.data,
  };
}

/** An activity of the mapping, its time as ISO 8601 like every time of the admin API. */
const activityView = (activity: Activity) => ({ ...activity, at: new Date(activity.at).toISOString() });

/** What a removal event changed, its next page as a cursor. */
function trayChangesView(summary: RemovalChangesSummary | null) {
  if (summary === null) return null;
  const { next, ...rest } = summary;
  return { ...rest, nextCursor: next ? encodeRecordCursor(next) : null };
}

/** GET /admin/events/:key: the event with what the mapping makes of it, its recipients and decisions. */
export function toEventDetailView(detail: EventDetail) {
  const { mapped, recipients } = detail;
  const iso = (at: number) => new Date(at).toISOString();
  return {
    ...toEventView(detail.event),
    activities: mapped.activities.map(activityView),
    memberships: mapped.memberships.map((change) => ({ ...change, at: iso(change.at) })),
    profiles: mapped.profiles.map((change) => ({ ...change, at: iso(change.at) })),
    bans: (mapped.bans ?? []).map((change) => ({ ...change, at: iso(change.at) })),
    recipients: {
      users: recipients.users,
      total: recipients.total,
      ...(recipients.community
        ? {
            community: {
              communityId: recipients.community.communityId,
              at: recipients.community.at.toISOString(),
            },
          }
        : {}),
    },
    decisions: detail.decisions.map(toDecisionView),
    ...(detail.trayChanges === undefined ? {} : { trayChanges: trayChangesView(detail.trayChanges) }),
  };
}
