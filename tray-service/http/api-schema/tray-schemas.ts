import { z } from 'zod';
import { MAX_TARGET_ID_LENGTH } from '../../domain/id-limits.ts';
import { storedId } from '../../domain/stored-text.ts';
import { trayVerbs } from '../../domain/tray-verb.ts';
import { notificationRecord } from './notification-record.ts';
import { cursorQuery, localeQuery, wholeNumberQuery } from './query-values.ts';
import { viewQuery } from './inbox-schemas.ts';
import { bodyError, queryError, unknownKeys } from './unknown-keys.ts';

/** The tray endpoints' inputs and outputs (docs/contract.md#tray): the routers parse and answer these. */

/** GET /notifications/v3/history: `startAfter` is the previous page's `nextPage`. */
export const historyV3Query = z.strictObject(
  {
    startAfter: cursorQuery()
      .optional()
      .meta({ param: { description: 'Omit or 1 for the first page; then the previous nextPage' } }),
    view: viewQuery,
    locale: localeQuery,
  },
  // A client moving from v2 that kept page=N would otherwise be served the first page for ever.
  queryError({ page: "v3 history pages with startAfter: the previous page's nextPage" }),
);

/** GET /notifications/v2/history: 1-based page number. */
export const historyV2Query = z.strictObject(
  {
    page: wholeNumberQuery(1_000_000, 1, 1)
      .refine((n) => n >= 1, { error: 'expected a page number from 1' })
      .optional()
      .meta({ param: { description: '1-based page number' } }),
    locale: localeQuery,
  },
  queryError({
    startAfter: 'v2 history pages with page, from 1',
    view: 'v2 history lists the inbox only; v3 history takes view',
  }),
);

/** POST /notifications/v2/read: the four verbs of 4.1 plus the mention verbs of 2.3. */
export const readBody = z.strictObject(
  {
    verb: z.enum(trayVerbs, { error: `expected one of ${trayVerbs.join(', ')}` }),
    targetId: storedId(MAX_TARGET_ID_LENGTH),
  },
  bodyError,
);

/**
 * The body of a call that takes none (last-read, delete-all, mark-all-as-read, a stream ticket):
 * nothing, or `{}`, which some HTTP clients send with every POST. Anything else is refused: a
 * client that sent `{"ids": [...]}` to delete-all meant something narrower than everything.
 */
export const emptyBody = z
  .strictObject({}, { error: unknownKeys('field', 'expected no body, or an empty JSON object') })
  .meta({ description: 'No body, or an empty JSON object' });

/** The query of a call that takes none: a parameter it would ignore is refused, never ignored. */
export const emptyQuery = z.strictObject({}, { error: unknownKeys('parameter', 'expected no query') });

/** The counts of the inbox: GET /notifications/v3's data, and the live stream's `unread` event. */
export const inboxCounts = z.strictObject({
  totalUnreadCount: z.number().int().min(0).meta({ description: 'Unread records in the inbox' }),
  totalUnseenCount: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Records in the inbox not seen (absent when the storage has no inbox)' }),
});

/** GET /notifications/v3. */
export const unreadCountBody = z.strictObject({ data: inboxCounts });

/** GET /notifications/v3/history. */
export const historyV3Page = z.strictObject({
  totalPages: z.number().int().min(0).meta({ description: "ceil(the view's records / TRAY_PAGE_SIZE)" }),
  nextPage: z
    .number()
    .int()
    .min(0)
    .meta({ description: 'Pass as startAfter for the next page; 0 when this is the last page' }),
  data: z.array(notificationRecord),
});

/** GET /notifications/v2/history. */
export const historyV2Page = z.strictObject({
  totalPages: z.number().int().min(0),
  data: z.array(notificationRecord),
});

/** GET /notifications/v3/mark-all-as-read. */
export const markAllBody = z.strictObject({ data: z.object({ message: z.string() }) });

/** NotificationHasRead, NotificationDeleteAll, last-read (docs/contract.md#tray). */
export const dataStringBody = z
  .strictObject({ data: z.string().meta({ examples: ['success'] }) })
  .meta({ description: 'NotificationHasRead / NotificationDeleteAll (docs/contract.md#tray)' });

export type UnreadCountBody = z.infer<typeof unreadCountBody>;
export type HistoryV3Page = z.infer<typeof historyV3Page>;
export type HistoryV2Page = z.infer<typeof historyV2Page>;
export type MarkAllBody = z.infer<typeof markAllBody>;
export type DataStringBody = z.infer<typeof dataStringBody>;
