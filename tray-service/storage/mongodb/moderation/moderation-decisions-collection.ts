import type { CollectionSpec } from '../setup/collection-spec.ts';
import { MODERATION_DECISIONS } from '../collection-names.ts';

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
      name: 'event_key',
      key: { eventKey: 1 },
      serves: '... ?eventKey= (the decisions about one stored event)',
    },
  ],
};
