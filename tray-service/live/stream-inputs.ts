import { z } from 'zod';

/** GET /notifications/v3/stream. */
export const streamQuery = z.object({
  locale: z.string({ error: 'expected one locale tag' }).max(35).optional(),
  ticket: z.string({ error: 'expected one ticket' }).max(64).optional(),
  /** For clients that cannot set Last-Event-ID (a new EventSource): the last id they received. */
  lastEventId: z.string({ error: 'expected one event id' }).max(1_024).optional(),
});
