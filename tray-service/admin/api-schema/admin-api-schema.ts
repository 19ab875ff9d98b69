import { createDocument, type oas31 } from 'zod-openapi';
import { withAnswerHeaders } from '../../http/api-schema/answer-headers.ts';
import { errorBody } from '../../http/api-schema/error-responses.ts';
import { ADMIN_SESSION_COOKIE } from '../session-cookie.ts';
import { adminSecurity } from './admin-errors.ts';
import { adminApiSchemas } from './admin-api-schemas.ts';
import type { AdminLimits } from './admin-inputs.ts';
import { adminPaths } from './admin-paths.ts';
import { consolePaths } from './console-paths.ts';

const securitySchemes: Record<string, oas31.SecuritySchemeObject> = {
  adminAuth: {
    type: 'http',
    scheme: 'bearer',
    description:
      'ADMIN_TOKEN, or an admin JWT: signed with its own key (ADMIN_JWT_SECRET, ADMIN_JWT_JWKS_URL) or else the tray API key, and carrying ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER. A user token is never an admin credential, whatever its claims: 401.',
  },
  adminSession: {
    type: 'apiKey',
    in: 'cookie',
    name: ADMIN_SESSION_COOKIE,
    description:
      'The admin session a browser opens at /admin/login (HTML form: not part of this document). A POST made with it must also send `x-csrf-token` with the session’s token (GET /admin/session), and a request from another site’s page (its Sec-Fetch-Site or Origin) cannot use it: either is refused with 403.',
  },
};

/**
 * The document the admin listener serves: the /admin JSON endpoints and nothing else. The tray
 * API's paths are described by the tray listener's own document; listed here they would resolve
 * to the admin listener, which does not serve them.
 */
export function createAdminOpenApiDocument(limits: AdminLimits): oas31.OpenAPIObject {
  const s = adminApiSchemas(limits);
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Tray admin API',
      version: '3.0.0',
      description:
        'The admin listener (ADMIN_PORT): stored events, moderation decisions, replays and the events console (docs/operations.md#admin-and-operators). Every call takes ADMIN_TOKEN or an admin JWT as a bearer, or the admin session cookie; a user token never is an admin credential. Errors share one shape: `{status:"error", code, message}`. The tray API is described at /openapi.json on its own listener.',
    },
    servers: [{ url: '/' }],
    security: adminSecurity,
    components: {
      securitySchemes,
      schemas: {
        Error: errorBody,
        AdminEvent: s.adminEvent,
        AdminEventPage: s.adminEventPage,
        AdminEventDetail: s.adminEventDetail,
        ModerationDecision: s.moderationDecision,
        ModerationDecisionPage: s.moderationDecisionPage,
        Activity: s.activity,
        Recipients: s.recipients,
        RecipientPage: s.recipientPage,
        TrayChange: s.trayChange,
        TrayChanges: s.trayChanges,
        TrayChangePage: s.trayChangePage,
        AdminSession: s.adminSession,
        EventsPerMinute: s.eventsPerMinute,
        LagChart: s.lagChart,
        QueueStats: s.queueStats,
        RuleTest: s.ruleTestResult,
        EventsFilter: s.replayFilter,
        Replayed: s.replayed,
        ReplayStarted: s.replayStarted,
        Replay: s.replayProgress,
      },
    },
    // Not rate limited per user (only failed authentications are, per address): admin-errors.ts.
    paths: withAnswerHeaders({ ...adminPaths(s), ...consolePaths(s) }),
  });
}
