import { z } from 'zod';
import { replayStates } from '../../use-cases/replay-events.ts';
import { isoDateTime } from './admin-outputs.ts';

/** The events console's answers (docs/operations.md#events-console-api). */

const counts = z.array(z.number().int().min(0));
const nullableMs = z.array(z.number().int().min(0).nullable());

/** GET /admin/session. */
export const adminSession = z.strictObject({ csrfToken: z.string(), expiresAt: isoDateTime });

/** GET /admin/stats/events-per-minute. */
export const eventsPerMinute = z.strictObject({
  from: isoDateTime,
  to: isoDateTime,
  minutes: counts.meta({ description: 'Each minute’s start, epoch ms' }),
  series: z.array(z.strictObject({ event: z.string(), counts })),
  others: z
    .strictObject({ events: z.number().int(), counts })
    .optional()
    .meta({ description: 'The names beyond the 30 most frequent, summed per minute; absent when none' }),
});

/** GET /admin/stats/lag. */
export const lagChart = z.strictObject({
  from: isoDateTime,
  to: isoDateTime,
  minutes: counts,
  count: counts,
  p50: nullableMs.meta({ description: 'ms, estimated from the minute’s histogram; null without events' }),
  p99: nullableMs,
  max: nullableMs.meta({ description: 'ms, exact' }),
  overall: z.strictObject({
    count: z.number().int().min(0),
    p50: z.number().int().nullable(),
    p99: z.number().int().nullable(),
    max: z.number().int().nullable(),
  }),
});

/** GET /admin/stats/queue. */
export const queueStatsBody = z.strictObject({
  queues: z.array(
    z.strictObject({
      name: z.string(),
      waiting: z.number().int(),
      active: z.number().int(),
      delayed: z.number().int(),
      paused: z.number().int().meta({
        description: 'Jobs of a paused queue not processed yet (bull moves its waiting jobs here)',
      }),
      failed: z.number().int(),
      completed: z.number().int(),
    }),
  ),
});

/** POST /admin/moderation/test. */
export const ruleTestResult = z.strictObject({
  rule: z.literal('blocked-words'),
  action: z.enum(['flag']).nullable(),
  matches: z.array(
    z.strictObject({
      word: z.string().meta({ description: 'As listed' }),
      start: z.number().int().min(0).meta({ description: 'Offset (UTF-16 code units) into the text in NFC' }),
      end: z.number().int().min(0).meta({ description: 'Exclusive' }),
    }),
  ),
});

/** A replay's filter as it shows it: the list's filters, times ISO 8601. */
export const replayFilter = z
  .strictObject({
    event: z.string().optional(),
    webhook: z.string().optional(),
    status: z.string().optional(),
    userId: z.string().optional(),
    communityId: z.string().optional(),
    moderation: z.string().optional(),
    since: z.string().optional(),
    until: z.string().optional(),
  })
  .meta({ description: 'The list’s filters as a JSON object (times ISO 8601)' });

/** POST /admin/events/{key}/replay. */
export const replayed = z.strictObject({ key: z.string(), replayed: z.literal(true), status: z.string() });

/** POST /admin/events/replay. */
export const replayStarted = z.strictObject({ id: z.string(), total: z.number().int().min(0) });

/** GET /admin/replays/{id}. */
export const replayProgress = z.strictObject({
  id: z.string(),
  state: z.enum(replayStates),
  total: z.number().int().min(0),
  done: z.number().int().min(0),
  failed: z.number().int().min(0),
  expired: z
    .number()
    .int()
    .min(0)
    .meta({ description: 'Events left alone: within 5 minutes of their expiry' }),
  filter: replayFilter,
  startedAt: isoDateTime,
  updatedAt: isoDateTime,
  finishedAt: isoDateTime.optional(),
});

export type AdminSessionBody = z.infer<typeof adminSession>;
export type EventsPerMinuteBody = z.infer<typeof eventsPerMinute>;
export type LagChartBody = z.infer<typeof lagChart>;
export type QueueStatsBody = z.infer<typeof queueStatsBody>;
export type RuleTestResult = z.infer<typeof ruleTestResult>;
export type ReplayedBody = z.infer<typeof replayed>;
export type ReplayStartedBody = z.infer<typeof replayStarted>;
export type ReplayProgressBody = z.infer<typeof replayProgress>;
