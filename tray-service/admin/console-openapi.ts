import { replayStates } from '../use-cases/replay-events.ts';
import { FIRST_RECIPIENTS } from '../use-cases/event-detail.ts';
import { exportFormats } from './events-router.ts';
import { MAX_TEST_TEXT } from './moderation-test-router.ts';
import { ADMIN_SESSION_COOKIE } from './session-cookie.ts';
import { adminErrors, busy, error, json, ref, type Schema } from './openapi-parts.ts';

/**
 * The events console's part of the admin API description (docs/operations.md#events-console-api):
 * the session, an event's detail and recipients, the live tail, the charts, the rule tester,
 * replays and the CSV export. Composed by admin-openapi.ts.
 */

/** The session cookie, beside the bearer: what the console page sends. */
export const consoleSecuritySchemes = {
  adminSession: {
    type: 'apiKey',
    in: 'cookie',
    name: ADMIN_SESSION_COOKIE,
    description:
      'The admin session a browser opens at /admin/login (HTML form: not part of this document). A POST made with it must also send `x-csrf-token` with the session’s token (GET /admin/session), or it is refused with 403.',
  },
} as const;

const time = { type: 'string', format: 'date-time' };
const strings = { type: 'array', items: { type: 'string' } };
const integers = { type: 'array', items: { type: 'integer', minimum: 0 } };
const nullableMs = { type: 'array', items: { type: ['integer', 'null'], minimum: 0 } };

/** Like AdminEvent (admin-openapi.ts), the console's extra fields beside it. */
export function consoleSchemas(options: { maxLimit: number }) {
  const object = (
    properties: Record<string, Schema>,
    required: string[] = Object.keys(properties),
  ): Schema => ({
    type: 'object',
    required,
    additionalProperties: false,
    properties,
  });
  return {
    Activity: {
      type: 'object',
      description:
        'What the mapping (docs/tray-engine.md) makes of the stored payload: one action for one audience (a user, or a community’s members)',
      required: [
        'verb',
        'targetId',
        'targetType',
        'targetName',
        'lastActionId',
        'feed',
        'actor',
        'at',
        'audience',
      ],
      properties: {
        verb: { type: 'string' },
        targetId: { type: 'string' },
        targetType: { type: 'string' },
        targetName: { type: 'string' },
        lastActionId: { type: 'string' },
        feed: { type: 'object' },
        actor: { type: 'object', required: ['userId', 'name'], properties: { userId: { type: 'string' } } },
        at: time,
        audience: { type: 'object', required: ['kind'] },
      },
    },
    Recipients: object(
      {
        users: {
          ...strings,
          maxItems: FIRST_RECIPIENTS,
          description: `The first ${FIRST_RECIPIENTS}, in id order`,
        },
        total: { type: 'integer', minimum: 0 },
        community: object({ communityId: { type: 'string' }, at: time }),
      },
      ['users', 'total'],
    ),
    RecipientPage: object({
      items: { ...strings, maxItems: options.maxLimit },
      nextCursor: { type: ['string', 'null'] },
    }),
    AdminSession: object({ csrfToken: { type: 'string' }, expiresAt: time }),
    EventsPerMinute: object({
      from: time,
      to: time,
      minutes: { ...integers, description: 'Each minute’s start, epoch ms' },
      series: {
        type: 'array',
        items: object({ event: { type: 'string' }, counts: integers }),
      },
    }),
    LagChart: object({
      from: time,
      to: time,
      minutes: integers,
      count: integers,
      p50: { ...nullableMs, description: 'ms, estimated from the minute’s histogram; null without events' },
      p99: nullableMs,
      max: { ...nullableMs, description: 'ms, exact' },
      overall: object({
        count: { type: 'integer', minimum: 0 },
        p50: { type: ['integer', 'null'] },
        p99: { type: ['integer', 'null'] },
        max: { type: ['integer', 'null'] },
      }),
    }),
    QueueStats: object({
      queues: {
        type: 'array',
        items: object({
          name: { type: 'string' },
          waiting: { type: 'integer' },
          active: { type: 'integer' },
          delayed: { type: 'integer' },
          failed: { type: 'integer' },
          completed: { type: 'integer' },
        }),
      },
    }),
    RuleTest: object({
      rule: { const: 'blocked-words' },
      action: { enum: ['flag', null] },
      matches: {
        type: 'array',
        items: object({
          word: { type: 'string', description: 'As listed' },
          start: {
            type: 'integer',
            minimum: 0,
            description: 'Offset (UTF-16 code units) into the text in NFC',
          },
          end: { type: 'integer', minimum: 0, description: 'Exclusive' },
        }),
      },
    }),
    EventsFilter: {
      type: 'object',
      additionalProperties: false,
      description: 'The list’s filters as a JSON object (times ISO 8601)',
      properties: {
        event: { type: 'string' },
        webhook: { type: 'string' },
        status: { type: 'string' },
        userId: { type: 'string' },
        communityId: { type: 'string' },
        moderation: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
      },
    },
    Replayed: object({ key: { type: 'string' }, replayed: { const: true }, status: { type: 'string' } }),
    ReplayStarted: object({ id: { type: 'string' }, total: { type: 'integer', minimum: 0 } }),
    Replay: object(
      {
        id: { type: 'string' },
        state: { enum: [...replayStates] },
        total: { type: 'integer', minimum: 0 },
        done: { type: 'integer', minimum: 0 },
        failed: { type: 'integer', minimum: 0 },
        filter: ref('EventsFilter'),
        startedAt: time,
        updatedAt: time,
        finishedAt: time,
      },
      ['id', 'state', 'total', 'done', 'failed', 'filter', 'startedAt', 'updatedAt'],
    ),
  };
}

/** The fields an event's detail adds to AdminEvent. */
export const detailProperties = {
  activities: { type: 'array', items: ref('Activity') },
  memberships: { type: 'array', items: { type: 'object' } },
  profiles: { type: 'array', items: { type: 'object' } },
  bans: { type: 'array', items: { type: 'object' } },
  recipients: ref('Recipients'),
  decisions: { type: 'array', items: ref('ModerationDecision') },
};

interface PathParts {
  security: readonly Record<string, never[]>[];
  description: string;
  eventFilters: readonly Schema[];
  paging: readonly Schema[];
  isoTime: (bound: string) => Schema;
}

export function consolePaths(_options: { maxLimit: number }, parts: PathParts) {
  const { security, eventFilters, paging } = parts;
  const tags = ['admin'];
  const keyParameter = { name: 'key', in: 'path', required: true, schema: { type: 'string', minLength: 1 } };
  const range = [
    {
      name: 'since',
      in: 'query',
      required: false,
      schema: parts.isoTime('First minute (default: until minus 24 hours)'),
    },
    {
      name: 'until',
      in: 'query',
      required: false,
      schema: parts.isoTime('End, exclusive (default: now); at most 24 hours after since'),
    },
  ];
  const forbidden = { 403: error('A POST with the session cookie but without its x-csrf-token') };
  const body = (schemaRef: Schema) => ({ required: true, content: json(schemaRef) });
  return {
    '/admin/session': {
      get: {
        tags,
        operationId: 'getAdminSession',
        summary: 'The signed-in page’s session: its CSRF token and end',
        security: [{ adminSession: [] }],
        responses: {
          200: { description: 'OK', content: json(ref('AdminSession')) },
          404: error('A bearer request: it has no session'),
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
        parameters: [keyParameter, ...paging],
        responses: {
          200: { description: 'OK', content: json(ref('RecipientPage')) },
          404: error('No unexpired event with this key'),
          ...adminErrors,
        },
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
        parameters: eventFilters,
        responses: {
          200: {
            description: 'A stream that stays open',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
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
        requestBody: body(ref('EventsFilter')),
        responses: {
          202: {
            description: 'Started; follow it at Location',
            headers: { Location: { description: '/admin/replays/{id}', schema: { type: 'string' } } },
            content: json(ref('ReplayStarted')),
          },
          ...forbidden,
          415: error('The body is not JSON'),
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
        parameters: [keyParameter],
        responses: {
          200: { description: 'Replayed', content: json(ref('Replayed')) },
          404: error('No unexpired event with this key'),
          ...forbidden,
          415: error('A body that is not JSON'),
          ...adminErrors,
        },
      },
    },
    '/admin/replays/{id}': {
      get: {
        tags,
        operationId: 'getAdminReplay',
        summary: 'A replay’s progress',
        security,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1 } }],
        responses: {
          200: { description: 'OK', content: json(ref('Replay')) },
          404: error('No replay with this id (kept a day after its last progress)'),
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
        parameters: range,
        responses: { 200: { description: 'OK', content: json(ref('EventsPerMinute')) }, ...adminErrors },
      },
    },
    '/admin/stats/lag': {
      get: {
        tags,
        operationId: 'getEventLag',
        summary: 'Acknowledgement-to-tray lag per minute: p50, p99, max (at most 24 hours)',
        security,
        parameters: range,
        responses: { 200: { description: 'OK', content: json(ref('LagChart')) }, ...adminErrors },
      },
    },
    '/admin/stats/queue': {
      get: {
        tags,
        operationId: 'getQueueStats',
        summary: 'Job counts of each queue',
        security,
        responses: { 200: { description: 'OK', content: json(ref('QueueStats')) }, ...adminErrors },
      },
    },
    '/admin/moderation/test': {
      post: {
        tags,
        operationId: 'testModerationRule',
        summary: 'What the blocked-words rule, with this instance’s list, finds in a text',
        security,
        requestBody: body({
          type: 'object',
          required: ['text'],
          additionalProperties: false,
          properties: { text: { type: 'string', maxLength: MAX_TEST_TEXT } },
        }),
        responses: {
          200: { description: 'OK', content: json(ref('RuleTest')) },
          ...forbidden,
          413: error('The body is over 256 kB'),
          415: error('The body is not JSON'),
          ...adminErrors,
        },
      },
    },
  };
}

/** The export's `format` parameter. */
export const formatParameter = {
  name: 'format',
  in: 'query',
  required: false,
  schema: { enum: [...exportFormats], default: 'ndjson' },
  description:
    'ndjson: one AdminEvent a line; csv: a header line, then one event a line (payload as a JSON cell; cells that a spreadsheet would run as formulas start with a quote)',
};
