import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { EVENT_LAG_MINUTES, EVENT_MINUTES } from './collection-names.ts';

/** event_minutes: events received per minute and event name (the events-per-minute chart). */
export const eventMinutesCollection: CollectionSpec = {
  name: EVENT_MINUTES,
  indexes: [
    {
      name: 'minute',
      key: { minute: 1 },
      serves: 'GET /admin/stats/events-per-minute: find({minute in [since, until)}) in minute order',
    },
    EXPIRY_INDEX,
  ],
};

/** event_lag_minutes: per minute of receipt, the histogram of acknowledgement-to-tray lags. */
export const eventLagMinutesCollection: CollectionSpec = {
  name: EVENT_LAG_MINUTES,
  indexes: [
    {
      name: 'minute',
      key: { minute: 1 },
      serves: 'GET /admin/stats/lag: find({minute in [since, until)}) in minute order',
    },
    EXPIRY_INDEX,
  ],
};
