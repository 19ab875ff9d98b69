/** SQL pieces of the per-minute rollups (postgres-events.ts stores into them, postgres-event-rollups.ts reads). */

/** The UTC minute a time falls in, whatever the session's time zone. */
export const MINUTE_OF = (column: string): string =>
  `to_timestamp(floor(extract(epoch FROM ${column}) / 60) * 60)`;

/** Two jsonb objects of counts added key by key ({"a": 1} + {"a": 2, "b": 1} = {"a": 3, "b": 1}). */
export const ADD_COUNTS = (a: string, b: string): string =>
  `(SELECT jsonb_object_agg(k, coalesce((${a}->>k)::int, 0) + coalesce((${b}->>k)::int, 0))
    FROM jsonb_object_keys(${a} || ${b}) AS k)`;
