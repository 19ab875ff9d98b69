import { deliveryStates } from '../domain/decision-doc.ts';
import { moderationActions } from '../domain/moderation-action.ts';
import { eventStatuses } from './events-router.ts';
import { adminErrors, busy, error, isoTime, json, query, ref, text } from './openapi-parts.ts';
import { moderationFilters } from '../domain/event-moderation.ts';
import {
  consolePaths,
  consoleSchemas,
  consoleSecuritySchemes,
  detailProperties,
  formatParameter,
} from './console-openapi.ts';

/**
 * The admin API's part of GET /openapi.json (schemathesis fuzzes it: RELIABILITY.md), composed into the tray API's document by tray-service/http/openapi.ts. Parameter
 * constraints are the ones the routers validate (the patterns, enums and lengths are imported from
 * them): what the document calls invalid the code refuses, and what it calls valid the code accepts
 * except for rules a schema cannot state (opaque cursors, since < until, month lengths). The queue
 * dashboard (/admin/queues) is an HTML application, not an API, and is left out (docs/operations.md#admin-api-description-openapi).
 */

/** A dedupe key as the receiver makes them (SHA-256 hex); the reliability suite stores an event under it. */
export const exampleEventKey = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

/** Where a page's first item leads (OpenAPI links; schemathesis follows them with --stateful=links). */
const toEvent = (field: string) => ({
  operationId: 'getAdminEvent',
  parameters: { key: `$response.body#/items/0/${field}` },
});

const timeRange = (field: string) => [
  query('since', isoTime(`Inclusive lower bound on ${field}`)),
  query('until', isoTime(`Exclusive upper bound on ${field}`)),
];
const eventFilters = [
  query('event', text('Event name', 'post.didCreate')),
  query('webhook', text('Name of the webhook the event came in on', 'main')),
  query('status', { enum: [...eventStatuses] }),
  query(
    'userId',
    text(
      'The acting user: the author of a post, comment or reaction; the one user a join, leave, profile change or ban names',
      'u-1234',
    ),
  ),
  query('communityId', text('The community the event happened in', 'c-hike')),
  query('moderation', {
    enum: [...moderationFilters],
    description:
      'none: no moderation decision; any: at least one; flag or ban-request: the most severe decision is that action',
  }),
  ...timeRange('receivedAt'),
];

export interface AdminOpenApiOptions {
  /** ADMIN_LIST_DEFAULT_LIMIT and ADMIN_LIST_MAX_LIMIT, as the routers apply them. */
  defaultLimit: number;
  maxLimit: number;
}

export function adminOpenApi(options: AdminOpenApiOptions) {
  const paging = [
    query('limit', {
      type: 'integer',
      minimum: 1,
      maximum: options.maxLimit,
      default: Math.min(options.defaultLimit, options.maxLimit),
    }),
    query('cursor', { type: 'string', description: "The previous page's nextCursor (opaque)" }),
  ];
  const page = (item: string) => ({
    type: 'object',
    required: ['items', 'nextCursor'],
    additionalProperties: false,
    properties: {
      items: { type: 'array', maxItems: options.maxLimit, items: ref(item) },
      nextCursor: {
        type: ['string', 'null'],
        description: 'Pass as cursor for the next page; null on the last',
      },
    },
  });
  const time = { type: 'string', format: 'date-time' };
  const security: Record<string, never[]>[] = [{ adminAuth: [] }, { adminSession: [] }];
  const description =
    'Unknown query parameters and repeated ones answer 400. Expired events are never returned.';

  const adminEvent = {
    type: 'object',
    description: "A stored event; key is the receiver's dedupe key (SHA-256 of the raw body)",
    required: ['key', 'event', 'webhook', 'status', 'receivedAt', 'storedAt', 'expiresAt', 'data'],
    additionalProperties: false,
    properties: {
      key: { type: 'string' },
      event: { type: 'string' },
      webhook: { type: 'string' },
      status: { enum: [...eventStatuses] },
      error: { type: 'string', description: 'Why the event is unknown or invalid' },
      userId: { type: 'string', description: 'The acting user, when the event names exactly one' },
      communityId: { type: 'string', description: 'The community the event happened in' },
      moderation: {
        enum: [...moderationActions],
        description: 'The most severe moderation decision about the event; absent when none',
      },
      receivedAt: time,
      storedAt: time,
      appliedAt: { ...time, description: 'When the worker finished applying it to the tray' },
      expiresAt: time,
      data: { type: 'object', description: 'The event payload as received' },
    },
  };

  return {
    securitySchemes: {
      adminAuth: {
        type: 'http',
        scheme: 'bearer',
        description:
          'ADMIN_TOKEN, or an admin JWT: signed with its own key (ADMIN_JWT_SECRET, ADMIN_JWT_JWKS_URL) or else the tray API key, and carrying ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER. A user token is never an admin credential, whatever its claims: 401.',
      },
      ...consoleSecuritySchemes,
    },
    schemas: {
      AdminEvent: adminEvent,
      AdminEventPage: page('AdminEvent'),
      AdminEventDetail: {
        ...adminEvent,
        description: 'A stored event with what the mapping makes of it, its recipients and its decisions',
        required: [...adminEvent.required, ...Object.keys(detailProperties)],
        properties: { ...adminEvent.properties, ...detailProperties },
      },
      ModerationDecision: {
        type: 'object',
        required: [
          'id',
          'eventKey',
          'event',
          'eventReceivedAt',
          'rule',
          'action',
          'reason',
          'subject',
          'decidedAt',
          'delivery',
          'deliveryAttempts',
        ],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          eventKey: { type: 'string' },
          event: { type: 'string' },
          eventReceivedAt: time,
          rule: { type: 'string' },
          action: { enum: [...moderationActions] },
          reason: { type: 'string' },
          subject: {
            type: 'object',
            required: ['type', 'id'],
            additionalProperties: false,
            properties: { type: { type: 'string' }, id: { type: 'string' } },
          },
          userId: { type: 'string' },
          decidedAt: time,
          delivery: { enum: [...deliveryStates] },
          deliveryAttempts: { type: 'integer', minimum: 0 },
          deliveredAt: time,
          lastError: { type: 'string', maxLength: 500 },
        },
      },
      ModerationDecisionPage: page('ModerationDecision'),
      ...consoleSchemas(options),
    },
    paths: {
      '/admin/events': {
        get: {
          tags: ['admin'],
          operationId: 'listAdminEvents',
          summary: 'Stored events, newest first (receivedAt, then key), one page',
          description,
          security,
          parameters: [...eventFilters, ...paging],
          responses: {
            200: {
              description: 'OK',
              content: json(ref('AdminEventPage')),
              links: { FirstEvent: toEvent('key') },
            },
            ...adminErrors,
          },
        },
      },
      '/admin/events/export': {
        get: {
          tags: ['admin'],
          operationId: 'exportAdminEvents',
          summary: 'Every matching event as NDJSON or CSV, newest first, streamed',
          description: `${description} A failure after the first line can only cut the stream short.`,
          security,
          parameters: [...eventFilters, formatParameter],
          responses: {
            200: {
              description:
                'ndjson: one AdminEvent JSON object per line, each ending with a newline; csv: RFC 4180 lines (CRLF), a header first',
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
                'application/x-ndjson': { schema: { type: 'string' }, 'x-itemSchema': ref('AdminEvent') },
                'text/csv': { schema: { type: 'string' } },
              },
            },
            ...adminErrors,
            400: error(
              'A parameter has a bad value or is unknown, or the filter matches more than ADMIN_EXPORT_MAX_ROWS events (code 400001); the message says which',
            ),
            429: busy('ADMIN_EXPORTS_MAX exports are running on this instance (code 429002)'),
          },
        },
      },
      '/admin/events/{key}': {
        get: {
          tags: ['admin'],
          operationId: 'getAdminEvent',
          summary: 'One stored event by its key, with its mapping, recipients and decisions',
          security,
          parameters: [
            {
              name: 'key',
              in: 'path',
              required: true,
              schema: { type: 'string', minLength: 1, examples: [exampleEventKey] },
            },
          ],
          responses: {
            200: { description: 'OK', content: json(ref('AdminEventDetail')) },
            404: error('No unexpired event with this key'),
            ...adminErrors,
          },
        },
      },
      '/admin/moderation/decisions': {
        get: {
          tags: ['admin'],
          operationId: 'listModerationDecisions',
          summary: 'Moderation decisions, newest first (decidedAt, then id), one page',
          description: 'Unknown query parameters and repeated ones answer 400.',
          security,
          parameters: [
            query('rule', text('Rule name', 'blocked-words')),
            query('action', { enum: [...moderationActions] }),
            query('userId', text('The user the decision is about', 'u-1234')),
            query('eventKey', text('Key of the stored event', exampleEventKey)),
            query('delivery', { enum: [...deliveryStates] }),
            ...timeRange('decidedAt'),
            ...paging,
          ],
          responses: {
            200: {
              description: 'OK',
              content: json(ref('ModerationDecisionPage')),
              links: { DecidedEvent: toEvent('eventKey') },
            },
            ...adminErrors,
          },
        },
      },
      ...consolePaths(options, { security, description, eventFilters, paging, isoTime }),
    },
  };
}
