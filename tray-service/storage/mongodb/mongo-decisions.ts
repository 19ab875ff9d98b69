import type { Db } from 'mongodb';
import type { DecisionsPort } from '../port.ts';
import { createDecisionsRepository } from './decisions-repository.ts';

/** The storage port's moderation decisions on MongoDB (moderation_decisions, the decision id as `_id`). */
export function createMongoDecisions(db: Db): DecisionsPort {
  const repository = createDecisionsRepository(db);
  return {
    saveAll: repository.saveAll,
    pendingAmong: repository.pendingAmong,
    get: async (id) => (await repository.get(id)) ?? undefined,
    list: repository.list,
    markDelivered: repository.markDelivered,
    markAttemptFailed: repository.markAttemptFailed,
  };
}
