import type Bull from 'bull';
import type { TrayConfig } from '../../shared/config/tray-config.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { createBlockedWordsRule } from './blocked-words-rule.ts';
import { createModerationStep, type ModerationStep } from './create-moderation-step.ts';
import {
  createDecisionEnqueuer,
  createDecisionsQueue,
  startDecisionDelivery,
  type DecisionJobData,
} from './decision-delivery.ts';
import type { DecisionsPort } from '../storage/port.ts';
import type { BlockedWord } from '../domain/blocked-words.ts';
import type { ModerationRule } from '../domain/moderation-rule.ts';

export interface Moderation {
  step: ModerationStep;
  decisions: DecisionsPort;
  /** The delivery queue, when MODERATION_WEBHOOK_URL is set (shown on the dashboard). */
  queue?: Bull.Queue<DecisionJobData>;
  /** Takes no more deliveries (at shutdown, alongside the HTTP drain); close() follows. */
  stopTaking(): Promise<void>;
  close(): Promise<void>;
}

/** Wires rules, storage and delivery from the configuration (tray-service/main.ts). */
export async function setupModeration(
  config: TrayConfig,
  deps: {
    /** storage.decisions: where decisions are kept (the admin API reads them). */
    decisions: DecisionsPort;
    /** The storage's ping: deliveries wait while it fails (decision-delivery.ts). */
    ping: () => Promise<void>;
    logger: Logger;
    words: readonly BlockedWord[];
    extraRules?: readonly ModerationRule[];
    /** Whether this process delivers decisions (the queue's consumer); false on an API-only process. */
    deliver?: boolean;
    /** Asks the process to stop (exit 1) when bull could not start taking deliveries. */
    onStopped?: (reason: string) => void;
  },
): Promise<Moderation> {
  const { words } = deps;
  const rules = [createBlockedWordsRule(words), ...(deps.extraRules ?? [])];
  const { decisions } = deps;
  deps.logger.info(
    { words: words.length, webhook: Boolean(config.MODERATION_WEBHOOK_URL) },
    'moderation ready',
  );
  if (!config.MODERATION_WEBHOOK_URL) {
    return {
      step: createModerationStep({ rules, decisions, logger: deps.logger }),
      decisions,
      stopTaking: async () => {},
      close: async () => {},
    };
  }
  const secret = config.MODERATION_WEBHOOK_SECRET;
  // loadTrayConfig already refuses a URL without its secret (checkModerationWebhook): never unsigned.
  if (secret === undefined)
    throw new Error('MODERATION_WEBHOOK_SECRET is required with MODERATION_WEBHOOK_URL');
  const queue = createDecisionsQueue({ redis: config.redis, prefix: config.QUEUE_PREFIX });
  const delivery =
    deps.deliver === false
      ? { stopTaking: async () => {}, close: () => queue.close() }
      : startDecisionDelivery({
          queue,
          decisions,
          ping: deps.ping,
          url: config.MODERATION_WEBHOOK_URL,
          secret,
          timeoutMs: config.MODERATION_WEBHOOK_TIMEOUT_MS,
          logger: deps.logger,
          onStopped: deps.onStopped,
        });
  const enqueue = createDecisionEnqueuer(queue, {
    attempts: config.MODERATION_WEBHOOK_ATTEMPTS,
    backoffMs: config.MODERATION_WEBHOOK_BACKOFF_MS,
  });
  return {
    step: createModerationStep({ rules, decisions, enqueue, logger: deps.logger }),
    decisions,
    queue,
    stopTaking: () => delivery.stopTaking(),
    close: () => delivery.close(),
  };
}
