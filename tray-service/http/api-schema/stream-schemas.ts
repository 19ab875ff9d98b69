import { z } from 'zod';
import { notificationRecord } from './notification-record.ts';
import { localeQuery } from './query-values.ts';
import { inboxCounts } from './tray-schemas.ts';
import { queryError } from './unknown-keys.ts';

/** The live tray's inputs and outputs (docs/live-tray.md). */

/**
 * A stream's id, as the service makes it: its opening time (base 36, nine digits), then a UUID.
 * Sent to each stream in its `opened` event, named back by a reconnect's `replaces`.
 */
export const streamId = z
  .string({ error: 'expected one stream id' })
  .regex(/^[0-9a-z]{9}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, {
    error: 'expected a stream id, as an `opened` event names it',
  });

/** GET /notifications/v3/stream. */
export const streamQuery = z.strictObject(
  {
    locale: localeQuery,
    ticket: z
      .string({ error: 'expected one ticket' })
      // Its own message: the schema's ("expected one ticket") would otherwise hide the limit.
      .max(64, { error: 'expected a ticket of at most 64 characters' })
      .optional()
      .meta({
        param: {
          description:
            'A single-use ticket from POST /notifications/v3/stream-ticket, instead of the Authorization header',
        },
      }),
    /** For clients that cannot set Last-Event-ID (a new EventSource): the last id they received. */
    lastEventId: z
      .string({ error: 'expected one event id' })
      .max(1_024, { error: 'expected an event id of at most 1024 characters' })
      .optional()
      .meta({
        param: {
          description: 'The last event id received, for clients that cannot send the Last-Event-ID header',
        },
      }),
    /**
     * A reconnect's previous stream, which its client reads no more (silent for too long): it gives
     * its place to the new one before any other of the user's, so a healthy stream of another tab is
     * not the one replaced at STREAMS_PER_USER.
     */
    replaces: streamId.optional().meta({
      param: {
        description:
          "The id of the caller's previous stream (its `opened` event's streamId) when reconnecting: that stream, if the user still holds it, ends with `replaced` and gives its place to this one, instead of the user's oldest at STREAMS_PER_USER. Another or unknown id changes nothing.",
      },
    }),
  },
  queryError(),
);

/** The header EventSource sends when it reconnects (read by the router as it is, not parsed here). */
export const streamHeaders = z.object({
  'Last-Event-ID': z
    .string()
    .max(1_024)
    .optional()
    .meta({ param: { description: 'The last event id received (EventSource sends it when it reconnects)' } }),
});

/** POST /notifications/v3/stream-ticket. */
export const streamTicketBody = z.strictObject({
  data: z.strictObject({
    ticket: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
    expiresIn: z.number().int().meta({ description: 'Seconds the ticket stays valid' }),
  }),
});

/** The `data:` line of each event the stream sends, by event name. */
export const streamEvents = {
  /** First on every connect: the stream's own id, which a reconnect names in `replaces`. */
  opened: z.strictObject({ streamId }),
  /** First on connect, then whenever a count changes: the counts of GET /notifications/v3. */
  unread: inboxCounts,
  /** A record created or changed, exactly as v3 history returns it. */
  record: notificationRecord,
  /** Records a removal (a deleted post, comment or reaction), or a leave a write missed, left with no action, by v_tarid_uid. */
  removed: z.strictObject({ ids: z.array(z.string()) }),
  /** Records marked read (v2/read, v3/mark-all-as-read), by v_tarid_uid. */
  read: z.strictObject({ ids: z.array(z.string()) }),
  /** Records marked seen (v3/records/seen), by v_tarid_uid. */
  seen: z.strictObject({ ids: z.array(z.string()) }),
  /** Records archived (v3/records/archive): out of the inbox. */
  archived: z.strictObject({ ids: z.array(z.string()) }),
  /** Records snoozed (v3/records/snooze) until `until` (epoch ms), when a `record` brings each back. */
  snoozed: z.strictObject({ ids: z.array(z.string()), until: z.number().int() }),
  /** The tray was deleted (v3/delete-all). */
  cleared: z.strictObject({}),
  /** The Last-Event-ID is too old to resume from (or ahead of the clock): reload the history. */
  reset: z.strictObject({}),
  /** The token (or the ticket's token) expired: the stream ends; reconnect with a fresh one. */
  expired: z.strictObject({ reason: z.literal('token-expired'), reconnect: z.literal(true) }),
  /**
   * A newer stream of the user took this one's place (at STREAMS_PER_USER, or a reconnect named
   * it in `replaces`): the stream ends; do not reconnect by yourself (it would replace the newer
   * one in turn), resume on the user's request.
   */
  replaced: z.strictObject({ reason: z.literal('stream-limit'), reconnect: z.literal(false) }),
};

/** The document's component for an event's data: NotificationRecord, StreamEvent_unread, ... */
export const streamEventComponent = (name: string) =>
  name === 'record' ? 'NotificationRecord' : `StreamEvent_${name}`;

export type StreamTicketBody = z.infer<typeof streamTicketBody>;
export type StreamEventName = keyof typeof streamEvents;
export type StreamEventData<E extends StreamEventName> = z.infer<(typeof streamEvents)[E]>;
