import type { CollectionSpec } from './collection-spec.ts';
import { MODERATION_DECISIONS } from './collection-names.ts';

/** moderation_decisions: what the moderation rules decided about stored events (admin API). */
export const moderationDecisionsCollection: CollectionSpec = {
  name: MODERATION_DECISIONS,
  indexes: [
    {
      name: 'decided_desc',
      key: { decidedAt: -1, _id: -1 },
      serves: 'GET /admin/moderation/decisions without filters, and since/until',
    },
    {
      name: 'user_decided_desc',
      key: { userId: 1, decidedAt: -1, _id: -1 },
      serves: '... ?userId= (everything decided about one user: the basis of a ban)',
    },
    { name: 'rule_decided_desc', key: { rule: 1, decidedAt: -1, _id: -1 }, serves: '... ?rule=' },
    { name: 'action_decided_desc', key: { action: 1, decidedAt: -1, _id: -1 }, serves: '... ?action=' },
    {
      name: 'delivery_decided_desc',
      key: { delivery: 1, decidedAt: -1, _id: -1 },
      serves: '... ?delivery= (e.g. failed deliveries an operator should look at)',
    },
    {
      // No TTL (unlike the other collections' expiry indexes): the server's TTL monitor would also
      // delete decisions still pending delivery, and a TTL index limited to the others needs a
      // partial filter FerretDB 1.24 does not take. The periodic purge alone expires them
      // (purge-expired-decisions.ts), in batches read from this index.
      name: 'expiry',
      key: { expiresAt: 1 },
      serves: 'purgeExpired: the expired decisions, oldest expiry first (pending ones left)',
    },
    {
      name: 'event_key',
      key: { eventKey: 1 },
      serves: '... ?eventKey= (the decisions about one stored event)',
    },
  ],
};
