import type { Logger } from '../../shared/logging/create-logger.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { DecisionsPort } from '../storage/port.ts';
import { toDecisionDoc } from '../domain/decision-doc.ts';
import { mostSevere } from '../domain/event-moderation.ts';
import { checkedDecisions, type ModerationRule } from '../domain/moderation-rule.ts';
import type { ModerationAction } from '../domain/moderation-action.ts';

export interface ModerationStepDeps {
  rules: readonly ModerationRule[];
  decisions: Pick<DecisionsPort, 'saveAll' | 'pendingAmong'>;
  /** Queues decisions for delivery; undefined when MODERATION_WEBHOOK_URL is unset. */
  enqueue?: (decisionIds: readonly string[]) => Promise<void>;
  logger: Logger;
  clock?: () => Date;
}

/**
 * Step 4 of the worker (docs/tray-engine.md): runs every rule on a stored event, stores each
 * decision once, and queues delivery. Safe to run twice on the same event (at-least-once queue):
 * decision ids are deterministic and delivery jobs are keyed by them. Resolves to the most severe
 * action decided, if any.
 */
export function createModerationStep(deps: ModerationStepDeps) {
  const clock = deps.clock ?? (() => new Date());
  return async (event: StoredEvent): Promise<ModerationAction | undefined> => {
    const now = clock();
    const docs = deps.rules.flatMap((rule) => {
      let answer: unknown;
      try {
        answer = rule.evaluate(event);
      } catch (error) {
        // A broken plugin must not stop the tray: log it and let the other rules decide.
        deps.logger.error({ err: error, rule: rule.name, eventKey: event.key }, 'moderation rule failed');
        return [];
      }
      // A Promise's later rejection would otherwise be unhandled, and end the process.
      if (answer instanceof Promise) answer.catch(() => undefined);
      const checked = checkedDecisions(answer);
      if ('problem' in checked) {
        deps.logger.error(
          { rule: rule.name, eventKey: event.key, problem: checked.problem },
          'moderation rule answered no valid decisions',
        );
        return [];
      }
      return checked.decisions.map((decision) =>
        toDecisionDoc(event, rule.name, decision, { now, delivery: deps.enqueue ? 'pending' : 'off' }),
      );
    });
    if (docs.length === 0) return undefined;
    await deps.decisions.saveAll(docs);
    if (deps.enqueue) {
      const pending = await deps.decisions.pendingAmong(docs.map((doc) => doc.id));
      if (pending.length > 0) await deps.enqueue(pending);
    }
    // The event's moderation outcome as these decisions make it (saveAll stored it with the event).
    return docs.reduce<ModerationAction | undefined>(
      (worst, doc) => mostSevere(worst, doc.action),
      undefined,
    );
  };
}

export type ModerationStep = ReturnType<typeof createModerationStep>;
