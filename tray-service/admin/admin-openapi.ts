import { deliveryStates } from '../domain/decision-doc.ts';
import { moderationActions } from '../domain/moderation-rule.ts';
import { eventStatuses } from './events-router.ts';
import { isoTimePattern } from './parse-iso-time.ts';
import { textMaxLength } from './parse-query.ts';

/**
 * The admin API's part of GET /openapi.json (schemathesis fuzzes it: RELIABILITY.md), composed into the tray API's document by tray-service/api/openapi.ts. Parameter
 * constraints are the ones the routers validate (the patterns, enums and lengths are imported from
 * them): what the document calls invalid the code refuses, and what it calls valid the code accepts
 * except for rules a schema cannot state (opaque cursors, since < until, month lengths). The queue
 * dashboard (/admin/queues) is an HTML application, not an API, and is left out (docs/operations.md#admin-api-description-openapi).
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema) => ({ 'application/json': { schema } });
const error = (description: string, headers?: Schema) => ({
  description,
  content: json(ref('Error')),
  ...(headers ? { headers } : {}),
});
const retryAfter = {
  'Retry-After': { description: 'Seconds to wait (MongoDB unavailable)', schema: { type: 'string' } },
};

/**
 * 429 only from the failed-authentication limit: the per-user rate limit guards the tray and
 * block paths only, not /admin.
 */
const adminErrors = {
  400: error('A parameter has a bad value or is unknown (code 400001); the message names it'),
  401: error('Missing bearer token, or neither ADMIN_TOKEN nor a valid admin JWT (a user token never is)', {
    'WWW-Authenticate': { description: '`Bearer` when the token is missing', schema: { type: 'string' } },
  }),
  429: error('Too many failed authentications from this address (AUTH_FAILURE_LIMIT); code 400311', {
    'Retry-After': { description: 'Seconds until the address may try again', schema: { type: 'string' } },
  }),
  500: error('Internal error (no details)'),
  503: error('MongoDB, or the JWT key set, is unavailable', retryAfter),
};

const isoTime = (bound: string) => ({
  type: 'string',
  pattern: isoTimePattern.source,
  description: `${bound}; ISO 8601 date or date-time (2026-11-20, 2026-11-20T10:00:00Z; UTC when no offset is given). The day must exist (2026-02-30 is a 400), and since < until.`,
});
const text = (description: string, example: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: textMaxLength,
  description,
  examples: [example],
});
const query = (name: string, schema: Schema) => ({ name, in: 'query', required: false, schema });

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
  const security = [{ adminAuth: [] }];
  const description =
    'Unknown query parameters and repeated ones answer 400. Expired events are never returned.';

  return {
    securitySchemes: {
      adminAuth: {
        type: 'http',
        scheme: 'bearer',
        description:
          'ADMIN_TOKEN, or an admin JWT: signed with the tray API key and carrying ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER. A user token is never an admin credential, whatever its claims: 401.',
      },
    },
    schemas: {
      AdminEvent: {
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
          receivedAt: time,
          storedAt: time,
          expiresAt: time,
          data: { type: 'object', description: 'The event payload as received' },
        },
      },
      AdminEventPage: page('AdminEvent'),
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
          summary: 'Every matching event as NDJSON, newest first, streamed',
          description: `${description} A failure after the first line can only cut the stream short.`,
          security,
          parameters: eventFilters,
          responses: {
            200: {
              description: 'One AdminEvent JSON object per line, each ending with a newline',
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
              },
            },
            ...adminErrors,
          },
        },
      },
      '/admin/events/{key}': {
        get: {
          tags: ['admin'],
          operationId: 'getAdminEvent',
          summary: 'One stored event by its key',
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
            200: { description: 'OK', content: json(ref('AdminEvent')) },
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
    },
  };
}
