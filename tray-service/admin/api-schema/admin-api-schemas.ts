import { z } from 'zod';
import {
  chartRangeQuery,
  decisionsQuery,
  eventsExportQuery,
  eventsFilter,
  eventsListQuery,
  recipientsQuery,
  ruleTestBody,
  trayChangesQuery,
  type AdminLimits,
} from './admin-inputs.ts';
import {
  activity,
  adminEvent,
  adminEventDetail,
  adminPage,
  exportCheck,
  moderationDecision,
  recipients,
  trayChange,
  trayChanges,
} from './admin-outputs.ts';
import * as console from './console-outputs.ts';

/**
 * The admin API's one schema (docs/operations.md#admin-api-description-openapi): every input and
 * output of the /admin JSON endpoints, declared once in zod, with the page limits this listener
 * enforces (ADMIN_LIST_DEFAULT_LIMIT, ADMIN_LIST_MAX_LIMIT). The routers parse with the same
 * declarations; the document served on the admin listener is generated from them. The queue
 * dashboard (/admin/queues), the sign-in pages and the console's page are HTML, not an API.
 */
export function adminApiSchemas(limits: AdminLimits) {
  return {
    eventsListQuery: eventsListQuery(limits),
    eventsExportQuery,
    eventsFilter,
    recipientsQuery: recipientsQuery(limits),
    trayChangesQuery: trayChangesQuery(limits),
    decisionsQuery: decisionsQuery(limits),
    chartRangeQuery,
    ruleTestBody,
    adminEvent,
    adminEventPage: adminPage(adminEvent, limits.maxLimit),
    adminEventDetail,
    exportCheck,
    activity,
    recipients,
    recipientPage: adminPage(z.string(), limits.maxLimit),
    trayChange,
    trayChanges,
    trayChangePage: adminPage(trayChange, limits.maxLimit),
    moderationDecision,
    moderationDecisionPage: adminPage(moderationDecision, limits.maxLimit),
    adminSession: console.adminSession,
    eventsPerMinute: console.eventsPerMinute,
    lagChart: console.lagChart,
    queueStats: console.queueStatsBody,
    ruleTestResult: console.ruleTestResult,
    replayFilter: console.replayFilter,
    replayed: console.replayed,
    replayStarted: console.replayStarted,
    replayProgress: console.replayProgress,
  };
}

export type AdminApiSchemas = ReturnType<typeof adminApiSchemas>;
