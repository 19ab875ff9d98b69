import type { z } from 'zod';
import type { EventsFilter } from '../use-cases/events-query.ts';
import { eventsFilter } from './api-schema/admin-inputs.ts';
import { parseQuery, requireOrderedRange } from './parse-query.ts';

/** The filter of the list, the export, the tail and a replay, as the events query takes it. */
export function toFilter(query: z.infer<typeof eventsFilter>): EventsFilter {
  requireOrderedRange(query);
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
}

/**
 * The events filter given as query parameters, a JSON body (`what`: its members) or a script's
 * options, by the API's own rules: one set of filters and messages wherever events are selected.
 * Throws the 400 (AppError VALIDATION) naming the field.
 */
export function parseEventsFilter(input: unknown, what?: Parameters<typeof parseQuery>[2]): EventsFilter {
  return toFilter(parseQuery(eventsFilter, input, what));
}
