import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { RECORDS_BODY_LIMIT_KB } from './body-limit.ts';
import { errorResponse, jsonContent, jsonResponse as ok } from './error-responses.ts';
import {
  archiveBody,
  idsBody,
  muteBody,
  muteTargetInput,
  muteTargetQuery,
  mutesBody,
  putMuteBody,
  removedBody,
  seenBody,
  snoozeBody,
  updatedBody,
} from './inbox-schemas.ts';
import { trayBodyErrors, userDeleted } from './tray-errors.ts';

/** Every inbox call on a storage adapter without the inbox extensions. */
export const inboxUnsupported = errorResponse(
  'The storage adapter in use has no inbox extensions (code 501000)',
);

const markErrors = {
  ...trayBodyErrors,
  400: errorResponse(
    'The body is not one of the shapes below, or a field failed validation (code 400001, the message names it); nothing changed',
  ),
  501: inboxUnsupported,
};

/** The records' errors: their bodies, of up to 100 keys, have a limit of their own. */
const recordsErrors = {
  ...markErrors,
  413: errorResponse(`Body larger than ${RECORDS_BODY_LIMIT_KB} kB`),
};

/** POST /notifications/v3/records/<kind>: one mark, `data.updated` the records it changed. */
const mark = (
  summary: string,
  body: Parameters<typeof jsonContent>[0],
): { post: ZodOpenApiOperationObject } => ({
  post: {
    summary,
    description:
      "Ids are v_tarid_uid keys (1-100, duplicates count once); ids of another user's, unknown or expired records are ignored. `updated` counts the records this call changed: repeating a mark gives 0.",
    requestBody: { required: true, content: jsonContent(body) },
    responses: { 200: ok(updatedBody), ...recordsErrors },
  },
});

/** The inbox's marks and mutes (docs/tray-api.md#the-inbox). */
export const inboxPaths: ZodOpenApiPathsObject = {
  '/notifications/v3/records/seen': mark('Mark records seen: {ids} or {all: true} (the inbox)', seenBody),
  '/notifications/v3/records/archive': mark(
    'Archive records: {ids}, {all: true} (the inbox) or {all: true, readOnly: true} (its read records)',
    archiveBody,
  ),
  '/notifications/v3/records/unarchive': mark(
    'Bring archived records back to the inbox as they were',
    idsBody,
  ),
  '/notifications/v3/records/snooze': mark(
    'Snooze records until `until` (later than now, at most 90 days on, nor past TRAY_RETENTION_DAYS): they come back unread and unseen then, unless their retention ended first',
    snoozeBody,
  ),
  '/notifications/v3/records/unsnooze': mark('Bring snoozed records back now, as they were', idsBody),
  '/notifications/v3/mutes': {
    get: {
      summary: "The caller's mutes in force, oldest first",
      responses: { 200: ok(mutesBody), ...trayBodyErrors, 501: inboxUnsupported },
    },
    put: {
      summary: 'Mute a post, a community or a user (again: changes only `until`)',
      description:
        'A `post` mute covers the post and everything on it; `community` its posts and everything on them; `user` every activity of that actor. A mention of the caller passes post and community mutes. At most 1,000 mutes in force (code 400003 beyond), 100 spans of one target and 10,000 of any targets in force or ended within the records’ retention (code 400004 beyond).',
      requestBody: { required: true, content: jsonContent(putMuteBody) },
      responses: {
        200: ok(muteBody),
        ...markErrors,
        400: errorResponse(
          'A field failed validation (code 400001: another targetType, an empty targetId, an until not in the future or after 9999-12-31T23:59:59.999Z), 1,000 mutes are already in force (code 400003), or 100 mutes of the target, or 10,000 of any targets, are in force or ended within the retention (code 400004); nothing changed',
        ),
        410: userDeleted,
      },
    },
    delete: {
      summary: 'Unmute a target (its two fields as a JSON body or as query parameters)',
      requestParams: { query: muteTargetQuery.partial() },
      requestBody: { required: false, content: jsonContent(muteTargetInput) },
      responses: { 200: ok(removedBody), ...markErrors },
    },
  },
};
