import { z } from 'zod';
import { trayVerbs } from '../../domain/tray-verb.ts';

/** A tray record as every reader sees it: history pages and the live stream (docs/contract.md#tray-records). */
export const notificationRecord = z
  .strictObject({
    v_tarid_uid: z.string().meta({
      description:
        "Primary key of the record: `<verb>_<targetId>_<userId>`, each part with '%' written %25 and '_' written %5F",
    }),
    description: z.string().meta({ description: 'Rendered tray message, in Content-Language' }),
    verb: z.enum(trayVerbs),
    imageUrl: z.string().meta({ description: "Latest actor's profile image ('' when none)" }),
    avatarCustomUrl: z
      .string()
      .optional()
      .meta({ description: 'Present only when the latest actor has a custom avatar' }),
    targetType: z.enum(['community', 'post']),
    targetName: z.string(),
    hasRead: z.boolean(),
    lastUpdate: z.number().int().meta({ description: 'Epoch milliseconds of the latest activity' }),
    actors: z.array(z.strictObject({ name: z.string() })).max(3),
    actorsCount: z.number().int().min(0),
    parentTargetId: z.string().optional(),
    targetId: z.string(),
    lastActionId: z.string(),
    lastActionSegmentNo: z.number().optional(),
    // The inbox state (docs/tray-rules.md#inbox): v3 history carries it; v2 history never does.
    isSeen: z
      .boolean()
      .optional()
      .meta({ description: 'v3: shown to the user in a list (POST records/seen)' }),
    archivedAt: z
      .number()
      .int()
      .nullable()
      .optional()
      .meta({ description: 'v3: epoch ms it was archived, or null' }),
    snoozedUntil: z
      .number()
      .int()
      .nullable()
      .optional()
      .meta({ description: 'v3: epoch ms its snooze ends, or null' }),
  })
  .meta({ description: 'A tray record (docs/contract.md#tray-records)' });

/** The public record; optional fields are absent rather than null. */
export type NotificationRecord = z.infer<typeof notificationRecord>;
