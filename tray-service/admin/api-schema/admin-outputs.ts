import { z } from 'zod';
import { deliveryStates } from '../../domain/decision-doc.ts';
import { moderationActions } from '../../domain/moderation-action.ts';
import { trayVerbs } from '../../domain/tray-verb.ts';
import { FIRST_RECIPIENTS } from '../../use-cases/event-detail.ts';
import { FIRST_TRAY_CHANGES } from '../../use-cases/removal-changes.ts';
import { REMOVAL_CHANGES_LISTED } from '../../domain/removal-tray-change.ts';
import { eventStatuses } from './admin-inputs.ts';

/** The admin API's answers about stored events and moderation decisions (times ISO 8601). */

/** What Date#toISOString writes: every time of the admin API. */
export const isoDateTime = z.string().meta({ format: 'date-time' });

/** A stored event; key is the receiver's dedupe key. */
export const adminEvent = z
  .strictObject({
    key: z.string(),
    event: z.string(),
    webhook: z.string(),
    status: z.enum(eventStatuses).meta({
      description:
        "What the tray made of it: applied (or stored, a known event that changes no tray), unknown (a name it does not know), invalid (a payload that failed validation), or foreign (from a webhook that is not the platform's: stored, never applied)",
    }),
    error: z.string().optional().meta({ description: 'Why the event is unknown or invalid' }),
    userId: z.string().optional().meta({ description: 'The acting user, when the event names exactly one' }),
    communityId: z.string().optional().meta({ description: 'The community the event happened in' }),
    moderation: z
      .enum(moderationActions)
      .optional()
      .meta({ description: 'The most severe moderation decision about the event; absent when none' }),
    receivedAt: isoDateTime,
    storedAt: isoDateTime,
    appliedAt: isoDateTime
      .optional()
      .meta({ description: 'When the worker finished applying it to the tray' }),
    expiresAt: isoDateTime,
    data: z.record(z.string(), z.unknown()).meta({ description: 'The event payload as received' }),
  })
  .meta({ description: "A stored event; key is the receiver's dedupe key (SHA-256 of the raw body)" });

/** A moderation rule's decision about an event. */
export const moderationDecision = z.strictObject({
  id: z.string(),
  eventKey: z.string(),
  event: z.string(),
  eventReceivedAt: isoDateTime,
  rule: z.string(),
  action: z.enum(moderationActions),
  reason: z.string(),
  subject: z.strictObject({ type: z.string(), id: z.string() }),
  userId: z.string().optional(),
  decidedAt: isoDateTime,
  delivery: z.enum(deliveryStates),
  deliveryAttempts: z.number().int().min(0),
  deliveredAt: isoDateTime.optional(),
  lastError: z.string().max(500).optional(),
});

/** What the mapping (docs/tray-engine.md) makes of the stored payload. */
export const activity = z
  .strictObject({
    verb: z.enum(trayVerbs),
    targetId: z.string(),
    targetType: z.enum(['community', 'post']),
    targetName: z.string(),
    parentTargetId: z.string().optional(),
    lastActionId: z.string(),
    lastActionSegmentNo: z.number().optional(),
    feed: z.strictObject({ kind: z.enum(['community', 'user']), id: z.string(), name: z.string() }),
    mentionIn: z.enum(['post', 'comment']).optional(),
    actor: z.strictObject({
      userId: z.string(),
      name: z.string(),
      imageUrl: z.string().optional(),
      avatarCustomUrl: z.string().optional(),
    }),
    at: isoDateTime,
    audience: z.discriminatedUnion('kind', [
      z.strictObject({ kind: z.literal('user'), userId: z.string() }),
      z.strictObject({ kind: z.literal('community'), communityId: z.string() }),
    ]),
    communityId: z.string().optional(),
  })
  .meta({
    description:
      'What the mapping (docs/tray-engine.md) makes of the stored payload: one action for one audience (a user, or a community’s members)',
  });

/** The users whose tray records an event changed. */
export const recipients = z.strictObject({
  users: z
    .array(z.string())
    .max(FIRST_RECIPIENTS)
    .meta({ description: `The first ${FIRST_RECIPIENTS}, in id order` }),
  total: z.number().int().min(0),
  community: z.strictObject({ communityId: z.string(), at: isoDateTime }).optional(),
});

const count = z.number().int().min(0);

/** A record's counts on one side of a removal. */
const recordCounts = z.strictObject({
  actorsCount: count,
  actorIds: z.array(z.string()).max(3).meta({ description: 'Its latest actors (at most 3), newest first' }),
  lastActionId: z.string().meta({ description: 'The action the record names' }),
});

/** One record a removal changed. */
export const trayChange = z
  .strictObject({
    userId: z.string(),
    key: z.string().meta({ description: 'The record key (v_tarid_uid)' }),
    change: z.enum(['shrunk', 'replaced', 'removed']).meta({
      description:
        'shrunk: fewer or other actors; replaced: the same actors, another action named; removed: no action was left',
    }),
    before: recordCounts,
    after: recordCounts.optional().meta({ description: 'Absent when the record was removed' }),
  })
  .meta({ description: 'One tray record a removal changed, with its counts before and after' });

/** What a removal event changed, recorded when the worker applied it. */
export const trayChanges = z
  .strictObject({
    voided: count.meta({
      description:
        'Kept actions the removal took out; 0: the action had not arrived (the removal waits for it) or had expired',
    }),
    shrunk: count,
    replaced: count,
    removed: count,
    listed: count.meta({
      description: `Changes kept to list: the first ${REMOVAL_CHANGES_LISTED} in (user, key) order; every change is counted`,
    }),
    items: z
      .array(trayChange)
      .max(FIRST_TRAY_CHANGES)
      .meta({ description: `The first ${FIRST_TRAY_CHANGES} listed` }),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as cursor to GET /admin/events/{key}/tray-changes; null on the last' }),
  })
  .meta({ description: 'Which trays a removal event changed and how, recorded when the worker applied it' });

/** GET /admin/events/{key}: the event with its mapping, recipients and decisions. */
export const adminEventDetail = adminEvent
  .extend({
    activities: z.array(activity),
    memberships: z.array(z.looseObject({})),
    profiles: z.array(z.looseObject({})),
    bans: z.array(z.looseObject({})),
    recipients,
    decisions: z.array(moderationDecision),
    trayChanges: trayChanges.nullable().optional().meta({
      description:
        'Removal events only: what it changed in the trays; null when nothing was recorded (not applied yet, or applied by a version that did not record it)',
    }),
  })
  .meta({
    description: 'A stored event with what the mapping makes of it, its recipients and its decisions',
  });

/** GET /admin/events/export/check: the export would be accepted now. */
export const exportCheck = z.strictObject({
  rows: z.number().int().min(0).meta({ description: 'The events the export would send' }),
});

/** A page of `item`s, at most `maxLimit`, and the cursor of the next. */
export const adminPage = <T extends z.ZodType>(item: T, maxLimit: number) =>
  z.strictObject({
    items: z.array(item).max(maxLimit),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as cursor for the next page; null on the last' }),
  });

export type AdminEventView = z.infer<typeof adminEvent>;
export type AdminEventDetailView = z.infer<typeof adminEventDetail>;
export type ModerationDecisionView = z.infer<typeof moderationDecision>;
export type TrayChangeView = z.infer<typeof trayChange>;
export type ExportCheckView = z.infer<typeof exportCheck>;
export interface AdminPageView<T> {
  items: T[];
  nextCursor: string | null;
}
