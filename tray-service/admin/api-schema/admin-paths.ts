import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errorResponse, jsonContent, jsonResponse as ok } from '../../http/api-schema/error-responses.ts';
import { adminErrors, adminSecurity, busy, noEvent } from './admin-errors.ts';
import type { AdminApiSchemas } from './admin-api-schemas.ts';
import { exampleEventKey } from './admin-inputs.ts';

const description =
  'Unknown query parameters and repeated ones answer 400. Expired events are never returned.';

/** Where a page's first item leads (OpenAPI links; schemathesis follows them with --stateful=links). */
const toEvent = (field: string) => ({
  operationId: 'getAdminEvent',
  parameters: { key: `$response.body#/items/0/${field}` },
});

/** What an export, and its check, refuse before sending anything. */
const exportRefusals = {
  400: errorResponse(
    'A parameter has a bad value or is unknown, or the filter matches more than ADMIN_EXPORT_MAX_ROWS events (code 400001); the message says which',
  ),
  429: busy('ADMIN_EXPORTS_MAX exports are running on this instance (code 429002)'),
};

/** An event's key in a path. */
export const eventKeyPath = z.object({
  key: z
    .string()
    .min(1)
    .meta({ examples: [exampleEventKey] }),
});

/** The stored events and the moderation decisions: GET /admin/events (+ /export, /{key}), /admin/moderation/decisions. */
export function adminPaths(s: AdminApiSchemas): ZodOpenApiPathsObject {
  const tags = ['admin'];
  const security = adminSecurity;
  return {
    '/admin/events': {
      get: {
        tags,
        operationId: 'listAdminEvents',
        summary: 'Stored events, newest first (receivedAt, then key), one page',
        description,
        security,
        requestParams: { query: s.eventsListQuery },
        responses: {
          200: {
            description: 'OK',
            content: jsonContent(s.adminEventPage),
            links: { FirstEvent: toEvent('key') },
          },
          ...adminErrors,
        },
      },
    },
    '/admin/events/export': {
      get: {
        tags,
        operationId: 'exportAdminEvents',
        summary: 'Every matching event as NDJSON or CSV, newest first, streamed',
        description: `${description} A failure after the first line can only cut the stream short.`,
        security,
        requestParams: { query: s.eventsExportQuery },
        responses: {
          200: {
            description:
              'ndjson: one AdminEvent JSON object per line, each ending with a newline; csv: RFC 4180 records (CRLF; a quoted cell may hold a line break), a header first (none with `after`)',
            headers: {
              'Content-Disposition': {
                description: 'attachment; filename="events.ndjson"',
                schema: { type: 'string' },
              },
            },
            content: {
              // OpenAPI 3.1 has no schema for the lines of a stream (3.2's itemSchema does);
              // schemathesis checks only the content type here, not the lines. x-itemSchema
              // says what each line is, and the tests validate every line against it.
              'application/x-ndjson': {
                schema: { type: 'string' },
                'x-itemSchema': { $ref: '#/components/schemas/AdminEvent' },
              },
              'text/csv': { schema: { type: 'string' } },
            },
          },
          ...adminErrors,
          ...exportRefusals,
        },
      },
    },
    '/admin/events/export/check': {
      get: {
        tags,
        operationId: 'checkAdminEventsExport',
        summary: 'Whether GET /admin/events/export with this query would be accepted now, sending no event',
        description: `${description} Answers as the export would before its first line (the same 400 and 429); a download link cannot show a refusal, so the console asks here first. A slot free now may be taken before the export starts.`,
        security,
        requestParams: { query: s.eventsExportQuery },
        responses: {
          200: ok(s.exportCheck),
          ...adminErrors,
          ...exportRefusals,
        },
      },
    },
    '/admin/events/{key}': {
      get: {
        tags,
        operationId: 'getAdminEvent',
        summary: 'One stored event by its key, with its mapping, recipients and decisions',
        security,
        requestParams: { path: eventKeyPath },
        responses: {
          200: ok(s.adminEventDetail),
          404: noEvent,
          ...adminErrors,
        },
      },
    },
    '/admin/moderation/decisions': {
      get: {
        tags,
        operationId: 'listModerationDecisions',
        summary: 'Moderation decisions, newest first (decidedAt, then id), one page',
        description: 'Unknown query parameters and repeated ones answer 400.',
        security,
        requestParams: { query: s.decisionsQuery },
        responses: {
          200: {
            description: 'OK',
            content: jsonContent(s.moderationDecisionPage),
            links: { DecidedEvent: toEvent('eventKey') },
          },
          ...adminErrors,
        },
      },
    },
  };
}
