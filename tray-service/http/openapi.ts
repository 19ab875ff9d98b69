import { trayVerbs } from '../domain/tray-verb.ts';

/**
 * The OpenAPI 3.1 description of the tray API, served at GET /openapi.json. Hand-written so that
 * it says what the contract says (docs/contract.md#api-served); tests validate real
 * responses against these schemas, so it cannot drift silently. The admin API's part is in
 * tray-service/admin/admin-openapi.ts; the admin listener passes it to createOpenApiDocument, so
 * this file, shared by every transport, knows nothing of the admin side.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema) => ({ 'application/json': { schema } });
const errorResponse = (description: string) => ({ description, content: json(ref('Error')) });

const errors = {
  400: errorResponse(
    'A field failed validation (code 400001, the message names it), the body is malformed, or a page cursor (startAfter, paginationToken) is invalid (code 400002, message "Query Token is invalid")',
  ),
  401: errorResponse('Missing, expired or invalid bearer token, or the user is globally banned'),
  405: errorResponse('Method not allowed on this path (Allow lists the allowed ones)'),
  429: {
    ...errorResponse(
      'More than RATE_LIMIT_CALLS calls in RATE_LIMIT_WINDOW_MS (message "RateLimit Exceed"), or too many failed authentications from the address (AUTH_FAILURE_LIMIT); code 400311',
    ),
    headers: {
      'Retry-After': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
    },
  },
  500: errorResponse('Internal error (no details)'),
  503: errorResponse('The storage (or the token key set) is unavailable'),
};
const bodyErrors = {
  ...errors,
  413: errorResponse('Body larger than 16 kB'),
  415: errorResponse('Body is not application/json'),
};

const blockHeaders = {
  Deprecation: { description: 'RFC 9745: the block list is deprecated', schema: { type: 'string' } },
  Sunset: { description: 'RFC 8594: Wed, 28 Feb 2024 00:00:00 GMT', schema: { type: 'string' } },
};
const withBlockHeaders = (responses: Record<string, Schema>) =>
  Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      { ...response, headers: { ...blockHeaders, ...(response.headers as Schema | undefined) } },
    ]),
  );
const blockErrors = withBlockHeaders({
  ...bodyErrors,
  410: errorResponse('BLOCK_API=off: the beta is gone'),
});

const userIdInput = {
  oneOf: [
    { type: 'string', minLength: 1, maxLength: 256 },
    { type: 'integer', minimum: 0 },
  ],
  description: 'A user id; numbers are read as their decimal string',
};

/** Body of block and unblock: one user per call (docs/contract.md#block-list-legacy-beta-deprecated). */
const blockUserBody = {
  required: true,
  content: json({ type: 'object', required: ['blockUserId'], properties: { blockUserId: userIdInput } }),
};

const localeParam = {
  name: 'locale',
  in: 'query',
  required: false,
  schema: { type: 'string', maxLength: 35 },
  description:
    'Locale of `description`; else Accept-Language, else the default. The chosen one is in Content-Language.',
};

const security = [{ bearerAuth: [] }];

export const trayOpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Notification tray and block-list API',
    version: '3.0.0',
    description:
      'The tray (docs/contract.md#tray) and legacy block list (docs/contract.md#block-list-legacy-beta-deprecated). Every call needs `Authorization: Bearer <JWT>`; the caller is the token\'s `sub` (or `userId` claim). Errors share one shape: `{status:"error", code, message}`.',
  },
  servers: [{ url: '/' }],
  security,
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      /** METRICS_TOKEN, for /metrics only: not a user token. */
      metricsToken: { type: 'http', scheme: 'bearer' },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['status', 'code', 'message'],
        additionalProperties: false,
        properties: {
          status: { const: 'error' },
          code: { type: 'integer', examples: [400001, 400002, 401000, 400311] },
          message: { type: 'string' },
        },
      },
      NotificationRecord: {
        type: 'object',
        description: 'A tray record (docs/contract.md#tray-records)',
        required: [
          'v_tarid_uid',
          'description',
          'verb',
          'imageUrl',
          'targetType',
          'targetName',
          'hasRead',
          'lastUpdate',
          'actors',
          'actorsCount',
          'targetId',
          'lastActionId',
        ],
        additionalProperties: false,
        properties: {
          v_tarid_uid: {
            type: 'string',
            description:
              "Primary key of the record: `<verb>_<targetId>_<userId>`, each part with '%' written %25 and '_' written %5F",
          },
          description: { type: 'string', description: 'Rendered tray message, in Content-Language' },
          verb: { enum: [...trayVerbs] },
          imageUrl: { type: 'string', description: "Latest actor's profile image ('' when none)" },
          avatarCustomUrl: {
            type: 'string',
            description: 'Present only when the latest actor has a custom avatar',
          },
          targetType: { enum: ['community', 'post'] },
          targetName: { type: 'string' },
          hasRead: { type: 'boolean' },
          lastUpdate: { type: 'integer', description: 'Epoch milliseconds of the latest activity' },
          actors: {
            type: 'array',
            maxItems: 3,
            items: {
              type: 'object',
              required: ['name'],
              additionalProperties: false,
              properties: { name: { type: 'string' } },
            },
          },
          actorsCount: { type: 'integer', minimum: 0 },
          parentTargetId: { type: 'string' },
          targetId: { type: 'string' },
          lastActionId: { type: 'string' },
          lastActionSegmentNo: { type: 'number' },
        },
      },
      NotificationHistory: {
        type: 'object',
        required: ['totalPages', 'nextPage', 'data'],
        additionalProperties: false,
        properties: {
          totalPages: { type: 'integer', minimum: 0, description: 'ceil(records / TRAY_PAGE_SIZE)' },
          nextPage: {
            type: 'integer',
            minimum: 0,
            description: 'Pass as startAfter for the next page; 0 when this is the last page',
          },
          data: { type: 'array', items: ref('NotificationRecord') },
        },
      },
      NotificationHistoryV2: {
        type: 'object',
        required: ['totalPages', 'data'],
        additionalProperties: false,
        properties: {
          totalPages: { type: 'integer', minimum: 0 },
          data: { type: 'array', items: ref('NotificationRecord') },
        },
      },
      NotificationTotalUnread: {
        type: 'object',
        required: ['data'],
        additionalProperties: false,
        properties: {
          data: {
            type: 'object',
            required: ['totalUnreadCount'],
            additionalProperties: false,
            properties: { totalUnreadCount: { type: 'integer', minimum: 0 } },
          },
        },
      },
      NotificationMarkAllAsRead: {
        type: 'object',
        required: ['data'],
        additionalProperties: false,
        properties: {
          data: {
            type: 'object',
            required: ['message'],
            additionalProperties: false,
            properties: { message: { type: 'string' } },
          },
        },
      },
      DataString: {
        type: 'object',
        description: 'NotificationHasRead / NotificationDeleteAll (docs/contract.md#tray)',
        required: ['data'],
        additionalProperties: false,
        properties: { data: { type: 'string', examples: ['success'] } },
      },
      BlockEntry: {
        type: 'object',
        required: ['blocked_userId', 'netid_uid'],
        additionalProperties: false,
        properties: {
          blocked_userId: { type: 'string' },
          netid_uid: { type: 'string', description: '`${NETWORK_ID}_${ownerUserId}`' },
        },
      },
      BlockList: {
        type: 'object',
        required: ['results', 'paginationToken'],
        additionalProperties: false,
        properties: {
          results: { type: 'array', maxItems: 20, items: ref('BlockEntry') },
          paginationToken: {
            oneOf: [ref('BlockEntry'), { type: 'null' }],
            description: 'null on the last page',
          },
        },
      },
      BlockStatus: {
        type: 'object',
        required: ['status'],
        additionalProperties: false,
        properties: { status: { const: 'success' } },
      },
      CheckList: {
        type: 'object',
        description: 'Each given user id mapped to true when the caller has blocked that user',
        additionalProperties: { type: 'boolean' },
      },
    },
  },
  paths: {
    '/notifications/v3': {
      get: {
        summary: 'Total unread count',
        description:
          'Records updated after the last-read time (POST /notifications/v2/last-read) and not marked read.',
        responses: { 200: { description: 'OK', content: json(ref('NotificationTotalUnread')) }, ...errors },
      },
    },
    '/notifications/v3/stream': {
      get: {
        summary: 'Live tray: server-sent events for the caller (text/event-stream)',
        description: [
          'Authenticated by the bearer token, or by `ticket` (POST /notifications/v3/stream-ticket) where headers cannot be set (a browser EventSource). Bans and the per-user rate limit apply as on every tray call; opening counts as one call. At most STREAMS_PER_USER streams per user are open at once across all instances.',
          'Events (each with an `id:`; `data:` is one JSON line):',
          '`unread` {totalUnreadCount}: first on connect, then whenever the count changes;',
          '`record` NotificationRecord: a record created or changed, exactly as v3 history returns it, described in the negotiated locale (Content-Language);',
          '`read` {ids: [v_tarid_uid]}: records marked read (v2/read, v3/mark-all-as-read);',
          '`cleared` {}: the tray was deleted (v3/delete-all);',
          '`reset` {}: the Last-Event-ID is too old to resume from; reload the history.',
          'A comment line every 15 s keeps the connection alive. Reconnecting with Last-Event-ID (or `lastEventId`) sends the count, then every record changed since that id, once. On shutdown the server sends a `retry:` hint and closes the stream. Open the stream first, then read the history: a fresh stream sends what changes from the moment it opens.',
        ].join(' '),
        parameters: [
          localeParam,
          {
            name: 'ticket',
            in: 'query',
            required: false,
            schema: { type: 'string', maxLength: 64 },
            description:
              'A single-use ticket from POST /notifications/v3/stream-ticket, instead of the Authorization header',
          },
          {
            name: 'lastEventId',
            in: 'query',
            required: false,
            schema: { type: 'string', maxLength: 1024 },
            description: 'The last event id received, for clients that cannot send the Last-Event-ID header',
          },
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            schema: { type: 'string', maxLength: 1024 },
            description: 'The last event id received (EventSource sends it when it reconnects)',
          },
        ],
        responses: {
          200: {
            description: 'The event stream; it stays open until the client, a ban or a shutdown closes it',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...errors,
          401: errorResponse(
            'Missing, expired or invalid bearer token, an unknown, expired or used ticket, or the user is globally banned',
          ),
          429: {
            ...errorResponse(
              'Over the per-user rate limit (code 400311), or every one of the STREAMS_PER_USER streams is open (code 429001)',
            ),
            headers: {
              'Retry-After': {
                description: 'Seconds to wait before trying again',
                schema: { type: 'integer' },
              },
            },
          },
        },
      },
    },
    '/notifications/v3/stream-ticket': {
      post: {
        summary: 'A single-use ticket that opens one live stream within 30 s',
        description:
          'Browsers cannot set headers on an EventSource, and tokens never go into URLs: this ticket stands in for the bearer token once, on any instance.',
        responses: {
          201: {
            description: 'Issued',
            content: json({
              type: 'object',
              required: ['data'],
              additionalProperties: false,
              properties: {
                data: {
                  type: 'object',
                  required: ['ticket', 'expiresIn'],
                  additionalProperties: false,
                  properties: {
                    ticket: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
                    expiresIn: { type: 'integer', description: 'Seconds the ticket stays valid' },
                  },
                },
              },
            }),
          },
          ...errors,
        },
      },
    },
    '/notifications/v3/history': {
      get: {
        summary: 'History page (v3, timestamp cursor)',
        description:
          'Newest first (lastUpdate desc, then v_tarid_uid desc). A page never splits records sharing one lastUpdate, so walking nextPage returns every record once; see docs/tray-api.md#paging-v3-startafternextpage.',
        parameters: [
          {
            name: 'startAfter',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 0 },
            description: 'Omit or 1 for the first page; then the previous nextPage',
          },
          localeParam,
        ],
        responses: { 200: { description: 'OK', content: json(ref('NotificationHistory')) }, ...errors },
      },
    },
    '/notifications/v2/history': {
      get: {
        summary: 'History page (v2, page number; no mentions)',
        parameters: [
          { name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
          localeParam,
        ],
        responses: { 200: { description: 'OK', content: json(ref('NotificationHistoryV2')) }, ...errors },
      },
    },
    '/notifications/v3/mark-all-as-read': {
      get: {
        summary: 'Mark every record of the caller read',
        responses: { 200: { description: 'OK', content: json(ref('NotificationMarkAllAsRead')) }, ...errors },
      },
    },
    '/notifications/v2/last-read': {
      post: {
        summary: "Set the caller's last-read time to now (resets the unread count)",
        responses: { 200: { description: 'OK', content: json(ref('DataString')) }, ...errors },
      },
    },
    '/notifications/v2/read': {
      post: {
        summary: 'Mark one record read',
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            required: ['verb', 'targetId'],
            properties: {
              verb: { enum: [...trayVerbs] },
              targetId: { type: 'string', minLength: 1, maxLength: 512 },
            },
          }),
        },
        responses: {
          200: { description: 'OK', content: json(ref('DataString')) },
          404: errorResponse('The caller has no record with this verb and target'),
          ...bodyErrors,
        },
      },
    },
    '/notifications/v3/delete-all': {
      delete: {
        summary: 'Delete every record of the caller',
        responses: { 200: { description: 'OK', content: json(ref('DataString')) }, ...errors },
      },
    },
    '/block/members': {
      post: {
        summary: 'Block one user (idempotent)',
        deprecated: true,
        requestBody: blockUserBody,
        responses: withBlockHeaders({
          200: { description: 'Blocked', content: json(ref('BlockStatus')) },
          ...blockErrors,
        }),
      },
      delete: {
        summary: 'Unblock one user (idempotent)',
        deprecated: true,
        requestBody: blockUserBody,
        responses: withBlockHeaders({
          200: { description: 'Not blocked', content: json(ref('BlockStatus')) },
          ...blockErrors,
        }),
      },
      get: {
        summary: 'Which of the given users the caller has blocked',
        deprecated: true,
        parameters: [
          {
            name: 'checkList',
            in: 'query',
            required: true,
            style: 'form',
            explode: true,
            schema: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1 } },
          },
        ],
        responses: withBlockHeaders({
          200: { description: 'OK', content: json(ref('CheckList')) },
          ...blockErrors,
        }),
      },
    },
    '/block': {
      post: {
        summary: "The caller's block list, 20 per page",
        deprecated: true,
        requestBody: {
          required: false,
          content: json({
            type: 'object',
            properties: { paginationToken: { oneOf: [ref('BlockEntry'), { type: 'null' }] } },
          }),
        },
        responses: withBlockHeaders({
          200: { description: 'OK', content: json(ref('BlockList')) },
          ...blockErrors,
        }),
      },
    },
    '/healthz': {
      get: {
        summary: 'The process is alive',
        security: [],
        responses: { 200: { description: '{"status":"ok"}' } },
      },
    },
    '/readyz': {
      get: {
        summary: 'The storage and Redis answer',
        security: [],
        responses: { 200: { description: 'Ready' }, 503: { description: 'A dependency is unavailable' } },
      },
    },
    '/metrics': {
      get: {
        summary:
          'Prometheus metrics: served here only with METRICS_TOKEN set, to its bearer (without it, on the METRICS_PORT listener alone)',
        security: [{ metricsToken: [] }],
        responses: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          401: errorResponse('Missing or wrong METRICS_TOKEN'),
        },
      },
    },
    '/openapi.json': {
      get: {
        summary: 'This document',
        security: [],
        responses: { 200: { description: 'OpenAPI 3.1 document' } },
      },
    },
  },
} as const;

/** Another listener's paths, schemas and security schemes, merged into the tray's document. */
export interface OpenApiPart {
  securitySchemes: Record<string, unknown>;
  schemas: Record<string, unknown>;
  paths: Record<string, unknown>;
}

/** The served document: the tray API, plus the admin API's part (with its real page limits) when mounted. */
export function createOpenApiDocument(part?: OpenApiPart) {
  if (!part) return trayOpenApiDocument;
  const tray = trayOpenApiDocument;
  return {
    ...tray,
    info: {
      ...tray.info,
      description: `${tray.info.description} The /admin paths (tag \`admin\`) take ADMIN_TOKEN or an admin JWT instead (docs/operations.md#admin-and-operators).`,
    },
    components: {
      securitySchemes: { ...tray.components.securitySchemes, ...part.securitySchemes },
      schemas: { ...tray.components.schemas, ...part.schemas },
    },
    paths: { ...tray.paths, ...part.paths },
  };
}
