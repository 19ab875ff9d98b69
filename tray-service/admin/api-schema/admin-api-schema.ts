import type { oas31 } from 'zod-openapi';
import { createTrayOpenApiDocument } from '../../http/api-schema/tray-api-schema.ts';
import { ADMIN_SESSION_COOKIE } from '../session-cookie.ts';
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
      'The admin session a browser opens at /admin/login (HTML form: not part of this document). A POST made with it must also send `x-csrf-token` with the session’s token (GET /admin/session), or it is refused with 403.',
  },
};

/** The document the admin listener serves: the tray API's, plus every /admin JSON endpoint. */
export function createAdminOpenApiDocument(limits: AdminLimits): oas31.OpenAPIObject {
  const s = adminApiSchemas(limits);
  return createTrayOpenApiDocument({
    description:
      'The /admin paths (tag `admin`) take ADMIN_TOKEN or an admin JWT instead (docs/operations.md#admin-and-operators).',
    securitySchemes,
    schemas: {
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
    paths: { ...adminPaths(s), ...consolePaths(s) },
  });
}
