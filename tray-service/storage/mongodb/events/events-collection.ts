import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { EVENTS } from '../collection-names.ts';

/** events: every received event, once (dedupe key as `_id`), for the admin API and exports. */
export const eventsCollection: CollectionSpec = {
  name: EVENTS,
  indexes: [
    {
      name: 'admin_received_desc',
      key: { receivedAt: -1, _id: -1 },
      serves: 'admin list/export without filters, and since/until ranges: newest first',
    },
    {
      name: 'admin_event_received_desc',
      key: { event: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by event name',
    },
    {
      name: 'admin_webhook_received_desc',
      key: { webhook: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by webhook',
    },
    {
      name: 'admin_user_received_desc',
      key: { userId: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by the acting user (?userId=)',
    },
    {
      name: 'admin_community_received_desc',
      key: { communityId: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by community (?communityId=)',
    },
    {
      name: 'admin_moderation_received_desc',
      key: { moderation: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by moderation outcome (?moderation=, $in merges the sorted runs)',
    },
    EXPIRY_INDEX,
    {
      name: 'community_posts',
      key: { communityDay: 1 },
      serves:
        'late-join backfill: find({communityDay}), a community’s stored posts of one day (backfill-join.ts)',
    },
  ],
  retiredIndexes: ['expiry_day'],
};
