import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errorResponse, jsonContent, jsonResponse as ok } from '../../http/api-schema/error-responses.ts';
import { bodyTooLarge } from '../../http/api-schema/tray-errors.ts';
import { adminErrors, adminSecurity, busy, noEvent } from './admin-errors.ts';
import type { AdminApiSchemas } from './admin-api-schemas.ts';
import { eventKeyPath } from './admin-paths.ts';
import { REMOVAL_CHANGES_LISTED } from '../../domain/removal-tray-change.ts';

/**
 * The events console's part of the admin API (docs/operations.md#events-console-api): the
 * session, an event's recipients, the live tail, the charts, the rule tester and replays.
 */
export function consolePaths(s: AdminApiSchemas): ZodOpenApiPathsObject {
  const tags = ['admin'];
  const security = adminSecurity;
  const body = (schema: z.ZodType) => ({ required: true, content: jsonContent(schema) });
  return {
    '/admin/session': {
      get: {
        tags,
        operationId: 'getAdminSession',
        summary: 'The signed-in page’s session: its CSRF token and end',
        security: [{ adminSession: [] }],
        responses: {
          200: ok(s.adminSession),
          404: errorResponse('A bearer request: it has no session'),
          ...adminErrors,
        },
      },
    },
    '/admin/events/{key}/recipients': {
      get: {
        tags,
        operationId: 'listAdminEventRecipients',
        summary: 'The users whose tray records the event changed, in id order, one page',
        security,
        requestParams: { path: eventKeyPath, query: s.recipientsQuery },
        responses: { 200: ok(s.recipientPage), 404: noEvent, ...adminErrors },
      },
    },
    '/admin/events/{key}/tray-changes': {
      get: {
        tags,
        operationId: 'listAdminEventTrayChanges',
        summary: 'The tray records a removal event changed, in (user, key) order, one page',
        description: `As recorded when the worker applied the removal: its first ${REMOVAL_CHANGES_LISTED} changes are listed (the counts in the event detail cover all). Empty for other events.`,
        security,
        requestParams: { path: eventKeyPath, query: s.trayChangesQuery },
        responses: { 200: ok(s.trayChangePage), 404: noEvent, ...adminErrors },
      },
    },
    '/admin/events/tail': {
      get: {
        tags,
        operationId: 'tailAdminEvents',
        summary: 'Newly applied events that pass the filters, as server-sent events',
        description:
          'Each event is `event: stored`, `id: <key>`, `data: <AdminEvent JSON>`; comment lines keep the connection alive. Nothing is replayed on reconnect.',
        security,
        requestParams: { query: s.eventsFilter },
        responses: {
          200: {
            description: 'A stream that stays open',
            content: {
              'text/event-stream': {
                schema: { type: 'string' },
                'x-events': { stored: { $ref: '#/components/schemas/AdminEvent' } },
              },
            },
          },
          ...adminErrors,
          429: busy(
            'Too many open tails on this instance, or of this admin (ADMIN_TAILS_PER_ADMIN; code 429001)',
          ),
        },
      },
    },
    '/admin/events/replay': {
      post: {
        tags,
        operationId: 'replayAdminEvents',
        summary: 'Replays every event of a filter into the tray, in the background',
        security,
        requestBody: body(s.eventsFilter),
        responses: {
          202: {
            description: 'Started; follow it at Location',
            headers: { Location: { description: '/admin/replays/{id}', schema: { type: 'string' } } },
            content: jsonContent(s.replayStarted),
          },
          413: bodyTooLarge,
          415: errorResponse('The body is not JSON'),
          ...adminErrors,
          429: busy('REPLAY_MAX_RUNNING replays are running on this instance (code 429003)'),
        },
      },
    },
    '/admin/events/{key}/replay': {
      post: {
        tags,
        operationId: 'replayAdminEvent',
        summary: 'Replays one event into the tray (idempotent: the tray changes only if it lacked it)',
        security,
        requestParams: { path: eventKeyPath },
        responses: {
          200: ok(s.replayed, 'Replayed'),
          404: noEvent,
          410: errorResponse(
            'The event expires within 5 minutes: left as it is (stored again, it would count as new)',
          ),
          413: bodyTooLarge,
          415: errorResponse('A body that is not JSON'),
          ...adminErrors,
          429: busy('4 replays of one event are running on this instance (code 429003)'),
        },
      },
    },
    '/admin/replays/{id}': {
      get: {
        tags,
        operationId: 'getAdminReplay',
        summary: 'A replay’s progress',
        security,
        requestParams: { path: z.object({ id: z.string().min(1) }) },
        responses: {
          200: ok(s.replayProgress),
          404: errorResponse('No replay with this id (kept a day after its last progress)'),
          ...adminErrors,
        },
      },
    },
    '/admin/stats/events-per-minute': {
      get: {
        tags,
        operationId: 'getEventsPerMinute',
        summary: 'Events received per minute, one series per event name (at most 24 hours)',
        security,
        requestParams: { query: s.chartRangeQuery },
        responses: { 200: ok(s.eventsPerMinute), ...adminErrors },
      },
    },
    '/admin/stats/lag': {
      get: {
        tags,
        operationId: 'getEventLag',
        summary: 'Acknowledgement-to-tray lag per minute: p50, p99, max (at most 24 hours)',
        security,
        requestParams: { query: s.chartRangeQuery },
        responses: { 200: ok(s.lagChart), ...adminErrors },
      },
    },
    '/admin/stats/queue': {
      get: {
        tags,
        operationId: 'getQueueStats',
        summary: 'Job counts of each queue',
        security,
        responses: { 200: ok(s.queueStats), ...adminErrors },
      },
    },
    '/admin/moderation/test': {
      post: {
        tags,
        operationId: 'testModerationRule',
        summary: 'What the blocked-words rule, with this instance’s list, finds in a text',
        security,
        requestBody: body(s.ruleTestBody),
        responses: {
          200: ok(s.ruleTestResult),
          413: errorResponse('The body is over 256 kB'),
          415: errorResponse('The body is not JSON'),
          ...adminErrors,
        },
      },
    },
  };
}
