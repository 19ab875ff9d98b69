import type { CollectionSpec } from './collection-spec.ts';

export const EVENT_MINUTES = 'event_minutes';
export const EVENT_LAG_MINUTES = 'event_lag_minutes';

/** event_minutes: events received per minute and event name (the events-per-minute chart). */
export const eventMinutesCollection: CollectionSpec = {
  name: EVENT_MINUTES,
  indexes: [
    {
      name: 'day',
      key: { day: 1 },
      serves: 'GET /admin/stats/events-per-minute: find({day}), one UTC day of minutes (event-rollups.ts)',
    },
    {
      name: 'expiry_day',
      key: { expiresDay: 1 },
      serves: 'retention: deleteMany({expiresDay}) in purgeExpired',
    },
  ],
  equalityFields: ['day', 'expiresDay'],
};

/** event_lag_minutes: per minute of receipt, the histogram of acknowledgement-to-tray lags. */
export const eventLagMinutesCollection: CollectionSpec = {
  name: EVENT_LAG_MINUTES,
  indexes: [
    {
      name: 'day',
      key: { day: 1 },
      serves: 'GET /admin/stats/lag: find({day}), one UTC day of minutes (event-rollups.ts)',
    },
    {
      name: 'expiry_day',
      key: { expiresDay: 1 },
      serves: 'retention: deleteMany({expiresDay}) in purgeExpired',
    },
  ],
  equalityFields: ['day', 'expiresDay'],
};
