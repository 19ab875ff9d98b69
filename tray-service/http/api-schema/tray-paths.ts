import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errorResponse, jsonContent, jsonResponse as ok } from './error-responses.ts';
import { inboxUnsupported } from './inbox-paths.ts';
import { trayBodyErrors, userDeleted } from './tray-errors.ts';
import {
  dataStringBody,
  emptyBody,
  historyV2Page,
  historyV2Query,
  historyV3Page,
  historyV3Query,
  markAllBody,
  readBody,
  unreadCountBody,
} from './tray-schemas.ts';

/** What a call that takes no input refuses (tray-service/http/no-input.ts). */
export const noInputDescription =
  'Takes no input: a query parameter, or a body other than an empty JSON object, is refused with 400 naming it (415 for a body that is not JSON), and changes nothing.';

/** The body of a call that takes none: absent, or an empty JSON object. */
export const noBody = { required: false, content: jsonContent(emptyBody) };

/** The tray endpoints (docs/contract.md#tray), as the document describes them. */
export const trayPaths: ZodOpenApiPathsObject = {
  '/notifications/v3': {
    get: {
      summary: 'Total unread and unseen counts of the inbox',
      description:
        'totalUnreadCount: records in the inbox (not archived, not snoozed) made unread (new activity, a wake-up) after the last-read time (POST /notifications/v2/last-read) and not marked read. totalUnseenCount: records in the inbox not seen, of those made unread after the last-read time.',
      responses: { 200: ok(unreadCountBody), ...trayBodyErrors },
    },
  },
  '/notifications/v3/history': {
    get: {
      summary: 'History page of one view (v3, timestamp cursor)',
      description:
        'The records of `view` (inbox by default), newest first (lastUpdate desc, then v_tarid_uid desc), with their inbox state. A page never splits records sharing one lastUpdate, so walking nextPage returns every record once; see docs/tray-api.md#paging-v3-startafternextpage.',
      requestParams: { query: historyV3Query },
      responses: { 200: ok(historyV3Page), ...trayBodyErrors, 501: inboxUnsupported },
    },
  },
  '/notifications/v2/history': {
    get: {
      summary: 'History page (v2, page number; the inbox only, no mentions)',
      requestParams: { query: historyV2Query },
      responses: { 200: ok(historyV2Page), ...trayBodyErrors },
    },
  },
  '/notifications/v3/mark-all-as-read': {
    get: {
      summary: 'Mark every record of the caller read',
      description: noInputDescription,
      responses: { 200: ok(markAllBody), ...trayBodyErrors },
    },
  },
  '/notifications/v2/last-read': {
    post: {
      summary: "Set the caller's last-read time to now (resets the unread count)",
      description: noInputDescription,
      requestBody: noBody,
      responses: { 200: ok(dataStringBody), ...trayBodyErrors, 410: userDeleted },
    },
  },
  '/notifications/v2/read': {
    post: {
      summary: 'Mark one record read',
      requestBody: { required: true, content: jsonContent(readBody) },
      responses: {
        200: ok(dataStringBody),
        404: errorResponse('The caller has no record with this verb and target'),
        ...trayBodyErrors,
      },
    },
  },
  '/notifications/v3/delete-all': {
    delete: {
      summary: 'Delete every record of the caller',
      description: noInputDescription,
      requestBody: noBody,
      responses: { 200: ok(dataStringBody), ...trayBodyErrors },
    },
  },
};
