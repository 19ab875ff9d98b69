import { z } from 'zod';
import { moderationFilters } from '../../domain/event-moderation.ts';
import { deliveryStates } from '../../domain/decision-doc.ts';
import { moderationActions } from '../../domain/moderation-action.ts';
import type { StoredEvent } from '../../domain/stored-event.ts';
import { documentedAs } from '../../http/api-schema/query-values.ts';
import { isoTime, nonEmpty, pageLimit } from '../parse-query.ts';
import { isoTimePattern } from '../parse-iso-time.ts';

/**
 * The admin API's inputs (docs/operations.md#admin-api-description-openapi): the routers parse
 * their queries and bodies with these, and the OpenAPI document is generated from them. What the
 * document calls invalid the code refuses, and what it calls valid the code accepts except for
 * rules a schema cannot state (opaque cursors, since < until, month lengths).
 */

/** Values of `status` (StoredEvent). */
export const eventStatuses = [
  'applied',
  'stored',
  'unknown',
  'invalid',
  'foreign',
] as const satisfies readonly StoredEvent['status'][];

/** The export's formats: NDJSON (one event view a line) or CSV (a spreadsheet). */
export const exportFormats = ['ndjson', 'csv'] as const;

/** A dedupe key as the receiver makes them (SHA-256 hex); the reliability suite stores an event under it. */
export const exampleEventKey = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

/** A time bound: an ISO 8601 date or date-time that exists. */
export const isoTimeQuery = (bound: string) =>
  isoTime.optional().meta(
    documentedAs({
      type: 'string',
      pattern: isoTimePattern.source,
      description: `${bound}; ISO 8601 date or date-time (2026-11-20, 2026-11-20T10:00:00Z; UTC when no offset is given), from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. The day must exist (2026-02-30 is a 400), and since < until.`,
    }),
  );

const text = (what: string, description: string, example: string) =>
  nonEmpty(what)
    .optional()
    .meta({ description, examples: [example] });

/** The filter of the list, the export, the tail and a replay (one shape, so they accept the same). */
export const eventsFilterShape = {
  event: text('an event name such as post.didCreate', 'Event name', 'post.didCreate'),
  webhook: text('a webhook name', 'Name of the webhook the event came in on', 'main'),
  status: z
    .enum(eventStatuses, { error: 'expected applied, stored, unknown, invalid or foreign' })
    .optional(),
  userId: text(
    'a user id',
    'The acting user: the author of a post, comment or reaction; the one user a join, leave, profile change or ban names',
    'u-1234',
  ),
  communityId: text('a community id', 'The community the event happened in', 'c-hike'),
  moderation: z
    .enum(moderationFilters, { error: `expected ${moderationFilters.join(', ')}` })
    .optional()
    .meta({
      description:
        'none: no moderation decision; any: at least one; flag or ban-request: the most severe decision is that action',
    }),
  since: isoTimeQuery('Inclusive lower bound on receivedAt'),
  until: isoTimeQuery('Exclusive upper bound on receivedAt'),
};

/** ADMIN_LIST_DEFAULT_LIMIT and ADMIN_LIST_MAX_LIMIT, as the routers apply them. */
export interface AdminLimits {
  defaultLimit: number;
  maxLimit: number;
}

/** `limit` and `cursor` of every paged list. */
export const pagingShape = (limits: AdminLimits) => ({
  limit: pageLimit(Math.min(limits.defaultLimit, limits.maxLimit), limits.maxLimit),
  cursor: z.string().optional().meta({ description: "The previous page's nextCursor (opaque)" }),
});

/** GET /admin/events. */
export const eventsListQuery = (limits: AdminLimits) =>
  z.object({ ...eventsFilterShape, ...pagingShape(limits) }).strict();

/** GET /admin/events/export. */
export const eventsExportQuery = z
  .object({
    ...eventsFilterShape,
    format: z.enum(exportFormats, { error: 'expected ndjson or csv' }).default('ndjson').meta({
      description:
        'ndjson: one AdminEvent a line; csv: a header line, then one event a line (payload as a JSON cell; cells that a spreadsheet would run as formulas start with a quote)',
    }),
    after: text(
      'the key of a stored event',
      'Resumes an export that was cut short: the key of the last event received, with the same filters. The export goes on with the events after it, in the same order (a CSV export without its header line, as the rest of a file that has it). 400 when no unexpired event has this key.',
      exampleEventKey,
    ),
  })
  .strict();

/** GET /admin/events/tail, and the body of POST /admin/events/replay. */
export const eventsFilter = z.object(eventsFilterShape).strict();

/** GET /admin/events/{key}/recipients. */
export const recipientsQuery = (limits: AdminLimits) => z.object(pagingShape(limits)).strict();

/** GET /admin/events/{key}/tray-changes. */
export const trayChangesQuery = recipientsQuery;

/** GET /admin/moderation/decisions. */
export const decisionsQuery = (limits: AdminLimits) =>
  z
    .object({
      rule: text('a rule name', 'Rule name', 'blocked-words'),
      action: z.enum(moderationActions, { error: `expected ${moderationActions.join(' or ')}` }).optional(),
      userId: text('a user id', 'The user the decision is about', 'u-1234'),
      eventKey: text('a stored event key', 'Key of the stored event', exampleEventKey),
      delivery: z.enum(deliveryStates, { error: 'expected off, pending, delivered or failed' }).optional(),
      since: isoTimeQuery('Inclusive lower bound on decidedAt'),
      until: isoTimeQuery('Exclusive upper bound on decidedAt'),
      ...pagingShape(limits),
    })
    .strict();

/** GET /admin/stats/events-per-minute and /lag: at most 24 hours. */
export const chartRangeQuery = z
  .object({
    since: isoTimeQuery('First minute (default: 24 hours before the end of until’s minute, not before 1970)'),
    until: isoTimeQuery(
      'End, exclusive (default: now); at most 24 hours after since, and at most 9999-12-31T23:59:00Z',
    ),
  })
  .strict();

/** A query or body that takes nothing (GET /admin/stats/queue, POST /admin/events/{key}/replay). */
export const nothing = z.object({}).strict();

/** Longest text the rule tester takes: a long post's worth. */
export const MAX_TEST_TEXT = 20_000;

/**
 * POST /admin/moderation/test. The limit carries its own message: a schema's `error` is also the
 * message of its checks that have none, and "expected a string" for a text too long misleads.
 */
export const ruleTestBody = z
  .object({
    text: z
      .string({ error: 'expected a string' })
      .max(MAX_TEST_TEXT, { error: `expected a text of at most ${MAX_TEST_TEXT} characters` }),
  })
  .strict();
