import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { errorResponse, header, jsonContent, unauthorizedResponse } from './error-responses.ts';
import {
  streamEventComponent,
  streamEvents,
  streamHeaders,
  streamQuery,
  streamTicketBody,
} from './stream-schemas.ts';
import { trayBodyErrors } from './tray-errors.ts';
import { noBody, noInputDescription } from './tray-paths.ts';

const streamDescription = [
  "Authenticated by the bearer token, or by `ticket` (POST /notifications/v3/stream-ticket) where headers cannot be set (a browser EventSource). Bans and the per-user rate limit apply as on every tray call; opening counts as one call. At most STREAMS_PER_USER streams per user are open at once across all instances: the next takes the place of the user's oldest, which ends with `replaced`. A reconnect names its client's previous stream in `replaces` (the `opened` event's streamId): that stream, if the user still holds it (a connection that died silently stays open on the server for minutes), ends with `replaced` and gives its place first, so the oldest, maybe another tab's healthy stream, keeps its own.",
  'Events (each with an `id:`, except those a stream opened to reset sends before its `reset`, so a reconnect before it is told to reset again; `data:` is one JSON line):',
  "`opened` {streamId}: first on connect, the stream's own id, for `replaces` when the client reconnects;",
  '`unread` {totalUnreadCount, totalUnseenCount}: on connect, right after `opened`, then whenever a count changes;',
  '`record` NotificationRecord: a record created or changed, exactly as v3 history returns it, described in the negotiated locale (Content-Language); also a record back in the inbox (unarchived, unsnoozed, or its snooze ended), then with its inbox state;',
  '`read` {ids: [v_tarid_uid]}: records marked read (v2/read, v3/mark-all-as-read);',
  '`seen` {ids}: records marked seen; `archived` {ids}: records archived; `snoozed` {ids, until}: records snoozed until `until`;',
  '`removed` {ids: [v_tarid_uid]}: records gone because a deleted post, comment or reaction, or a leave that arrived after the actions it precedes, left them with no action (a record it only shrank comes as `record`);',
  '`cleared` {}: the tray was deleted (v3/delete-all);',
  '`reset` {}: the Last-Event-ID is too old to resume from (or names a time ahead of the server clock); reload the history;',
  '`expired` {reason: "token-expired", reconnect: true}: the token expired; the stream ends, reconnect with a fresh token or ticket;',
  '`replaced` {reason: "stream-limit", reconnect: false}: a newer stream of the user took this one\'s place at STREAMS_PER_USER (or named it in `replaces`); the stream ends (with a `retry:` hint of 30 s), and a client does not reconnect by itself (it would replace the newer one in turn), only when the user asks.',
  'The data of each event is declared in x-events (a schema per event name).',
  "A comment line every 15 s keeps the connection alive; on a stream quiet for over an hour it is followed by a block with only an `id:` (an hour before the clock), which EventSource takes as the last event id, so a reconnect after a quiet day resumes instead of getting `reset`. Reconnecting with Last-Event-ID (or `lastEventId`) sends the count, then every record changed since that id, once. On shutdown the server sends a `retry:` hint and closes the stream. Open the stream first and read the history after its `unread` event (or `reset`): a fresh stream sends what changes from the moment it is subscribed to the user's changes, which `unread` follows; `opened` comes before the subscription, so history read on `opened` can miss a change.",
].join(' ');

/** The live tray (docs/live-tray.md): the stream and its tickets. */
export const streamPaths: ZodOpenApiPathsObject = {
  '/notifications/v3/stream': {
    get: {
      summary: 'Live tray: server-sent events for the caller (text/event-stream)',
      description: streamDescription,
      security: [{ bearerAuth: [] }, { streamTicket: [] }],
      requestParams: { query: streamQuery, header: streamHeaders },
      requestBody: noBody,
      responses: {
        200: {
          description:
            'The event stream; it stays open until the client closes it, its token expires (`expired`), a newer stream of the user takes its place (`replaced`), a ban or a shutdown',
          content: {
            'text/event-stream': {
              schema: { type: 'string' },
              // OpenAPI 3.1 has no schema for the events of a stream: x-events names each event's data.
              'x-events': Object.fromEntries(
                Object.keys(streamEvents).map((name) => [
                  name,
                  { $ref: `#/components/schemas/${streamEventComponent(name)}` },
                ]),
              ),
            },
          },
        },
        ...trayBodyErrors,
        401: unauthorizedResponse(
          'Missing, expired or invalid bearer token or an unknown, expired or used ticket (code 401000), or the user is globally banned (code 401001)',
        ),
        429: errorResponse('Over the per-user rate limit (code 400311)', {
          'Retry-After': header('Seconds to wait before trying again', 'integer'),
        }),
        503: errorResponse(
          'The storage (or the token key set) is unavailable, or this instance holds STREAMS_PER_INSTANCE streams (code 503000). A ticket refused because the instance is full is not spent; after any other 503 it may be: buy a new one to try again',
          { 'Retry-After': header('Seconds to wait before trying again', 'integer') },
        ),
      },
    },
  },
  '/notifications/v3/stream-ticket': {
    post: {
      summary: 'A single-use ticket that opens one live stream within 30 s',
      description:
        'Browsers cannot set headers on an EventSource, and tokens never go into URLs: this ticket stands in for the bearer token once, on any instance. ' +
        noInputDescription,
      requestBody: noBody,
      responses: {
        201: { description: 'Issued', content: jsonContent(streamTicketBody) },
        ...trayBodyErrors,
      },
    },
  },
};
