import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';

/** Variables of the signature on outgoing moderation decisions (docs/operations.md#moderation). */
export const trayModerationWebhookShape = {
  /**
   * The HMAC-SHA256 key decisions sent to MODERATION_WEBHOOK_URL are signed with, so their
   * receiver can tell them from forgeries; required with the URL. Its own secret, shared with
   * nobody else (not a webhook or token secret).
   */
  MODERATION_WEBHOOK_SECRET: z
    .string()
    .min(32, { error: 'expected at least 32 characters (e.g. `openssl rand -hex 32`)' })
    .optional(),
};

/** Decisions go out only signed: a URL without a secret stops start-up, naming the secret. */
export function checkModerationWebhook(config: {
  MODERATION_WEBHOOK_URL?: string | undefined;
  MODERATION_WEBHOOK_SECRET?: string | undefined;
}): void {
  if (config.MODERATION_WEBHOOK_URL !== undefined && config.MODERATION_WEBHOOK_SECRET === undefined) {
    throw new ConfigError([
      {
        variable: 'MODERATION_WEBHOOK_SECRET',
        message: 'required when MODERATION_WEBHOOK_URL is set: decisions are signed with it',
      },
    ]);
  }
}
