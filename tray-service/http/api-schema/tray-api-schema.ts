import { createDocument, type oas31 } from 'zod-openapi';
import { withAnswerHeaders } from './answer-headers.ts';
import * as block from './block-schemas.ts';
import { blockPaths } from './block-paths.ts';
import { errorBody, unauthorizedBody } from './error-responses.ts';
import { notificationRecord } from './notification-record.ts';
import { healthBody, readinessBody, servicePaths } from './service-paths.ts';
import * as stream from './stream-schemas.ts';
import { streamEventComponent } from './stream-schemas.ts';
import { streamPaths } from './stream-paths.ts';
import * as inbox from './inbox-schemas.ts';
import { inboxPaths } from './inbox-paths.ts';
import * as tray from './tray-schemas.ts';
import { trayPaths } from './tray-paths.ts';

/**
 * The tray API's one schema (docs/tray-api.md#one-schema): every input and output of the tray,
 * block-list and live-stream endpoints, declared once in zod. The routers parse their inputs with
 * these schemas and type their answers with z.infer of them; the OpenAPI document served at
 * /openapi.json is generated from them; the client package imports them.
 */
export const trayApiSchemas = {
  error: errorBody,
  unauthorizedBody,
  notificationRecord,
  historyV3Query: tray.historyV3Query,
  historyV3Page: tray.historyV3Page,
  historyV2Query: tray.historyV2Query,
  historyV2Page: tray.historyV2Page,
  unreadCountBody: tray.unreadCountBody,
  readBody: tray.readBody,
  markAllBody: tray.markAllBody,
  dataStringBody: tray.dataStringBody,
  seenBody: inbox.seenBody,
  archiveBody: inbox.archiveBody,
  idsBody: inbox.idsBody,
  snoozeBody: inbox.snoozeBody,
  updatedBody: inbox.updatedBody,
  putMuteBody: inbox.putMuteBody,
  muteTargetInput: inbox.muteTargetInput,
  muteTargetQuery: inbox.muteTargetQuery,
  mutesBody: inbox.mutesBody,
  muteBody: inbox.muteBody,
  removedBody: inbox.removedBody,
  blockMemberBody: block.blockMemberBody,
  unblockMemberBody: block.unblockMemberBody,
  blockListBody: block.blockListBody,
  blockListPage: block.blockListPage,
  blockEntry: block.blockEntry,
  blockStatusBody: block.blockStatusBody,
  checkListQuery: block.checkListQuery,
  checkListBody: block.checkListBody,
  streamQuery: stream.streamQuery,
  streamTicketBody: stream.streamTicketBody,
  streamEvents: stream.streamEvents,
  healthBody,
  readinessBody,
};

/**
 * Which way each schema travels: `input` for what callers send (queries, request bodies), typed as
 * the service accepts them, before its parsing transforms; `output` for what it answers. A Record
 * over every key, so a schema added above does not type-check until it is placed here too: guessed
 * from its name, a request typed as its parsed form would give the client wrong types unnoticed.
 */
export const trayApiSchemaDirections: Record<
  Exclude<keyof typeof trayApiSchemas, 'streamEvents'>,
  'input' | 'output'
> = {
  error: 'output',
  unauthorizedBody: 'output',
  notificationRecord: 'output',
  historyV3Query: 'input',
  historyV3Page: 'output',
  historyV2Query: 'input',
  historyV2Page: 'output',
  unreadCountBody: 'output',
  readBody: 'input',
  markAllBody: 'output',
  dataStringBody: 'output',
  seenBody: 'input',
  archiveBody: 'input',
  idsBody: 'input',
  snoozeBody: 'input',
  updatedBody: 'output',
  putMuteBody: 'input',
  muteTargetInput: 'input',
  muteTargetQuery: 'input',
  mutesBody: 'output',
  muteBody: 'output',
  removedBody: 'output',
  blockMemberBody: 'input',
  unblockMemberBody: 'input',
  blockListBody: 'input',
  blockListPage: 'output',
  blockEntry: 'output',
  blockStatusBody: 'output',
  checkListQuery: 'input',
  checkListBody: 'output',
  streamQuery: 'input',
  streamTicketBody: 'output',
  healthBody: 'output',
  readinessBody: 'output',
};

/** Named components: each appears once in the document and is referenced wherever it is used. */
const components = {
  Error: errorBody,
  Unauthorized: unauthorizedBody,
  NotificationRecord: notificationRecord,
  NotificationHistory: tray.historyV3Page,
  NotificationHistoryV2: tray.historyV2Page,
  NotificationTotalUnread: tray.unreadCountBody,
  NotificationMarkAllAsRead: tray.markAllBody,
  DataString: tray.dataStringBody,
  InboxUpdated: inbox.updatedBody,
  Mutes: inbox.mutesBody,
  MutePut: inbox.muteBody,
  MuteRemoved: inbox.removedBody,
  BlockEntry: block.blockEntry,
  BlockList: block.blockListPage,
  BlockStatus: block.blockStatusBody,
  CheckList: block.checkListBody,
  StreamTicket: stream.streamTicketBody,
  ...Object.fromEntries(
    Object.entries(stream.streamEvents)
      .filter(([, schema]) => schema !== notificationRecord)
      .map(([name, schema]) => [streamEventComponent(name), schema]),
  ),
};

const description =
  'The tray (docs/contract.md#tray) and legacy block list (docs/contract.md#block-list-legacy-beta-deprecated). Every call needs `Authorization: Bearer <JWT>`; the caller is the token\'s `sub` (or `userId` claim). Errors share one shape: `{status:"error", code, message}`.';

let document: oas31.OpenAPIObject | undefined;

/**
 * The tray listener's document: the tray, block-list, live-stream and service paths (the admin
 * listener serves its own, createAdminOpenApiDocument). Generated once at start-up (tens of
 * milliseconds) and kept, as every app built in a process serves the same.
 */
export function createTrayOpenApiDocument(): oas31.OpenAPIObject {
  return (document ??= createDocument({
    openapi: '3.1.0',
    info: { title: 'Notification tray and block-list API', version: '3.0.0', description },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        streamTicket: {
          type: 'apiKey',
          in: 'query',
          name: 'ticket',
          description:
            'A single-use ticket from POST /notifications/v3/stream-ticket, for the live stream only (a browser EventSource cannot set headers)',
        },
        metricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'METRICS_TOKEN, for /metrics only: not a user token',
        },
      },
      schemas: components,
    },
    paths: {
      // Every user call is behind the per-user rate limit (the stream's, once its ticket is taken).
      ...withAnswerHeaders(
        { ...trayPaths, ...inboxPaths, ...streamPaths, ...blockPaths },
        { rateLimited: true, bearer: true },
      ),
      ...withAnswerHeaders(servicePaths, { bearer: true }),
    },
  }));
}
