import { z } from 'zod';
import { looksLikeSecret } from './looks-like-secret.ts';

/** A webhook's name as WEBHOOK_SECRETS writes it (`name=secret`). */
const webhookName = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * TRAY_PLATFORM_WEBHOOKS: comma-separated webhook names, each once. An entry is named by its
 * position only: an operator who pastes WEBHOOK_SECRETS here by mistake must not find a secret in
 * the start-up error.
 */
const platformWebhooks = z.string().transform((text, ctx): readonly string[] => {
  const names: string[] = [];
  for (const [index, raw] of text.split(',').entries()) {
    const name = raw.trim();
    const problem =
      name === ''
        ? 'is empty'
        : looksLikeSecret(name)
          ? // It would be logged at start-up as a webhook's name.
            'looks like a secret, not a webhook name (was a secret pasted here?)'
          : webhookName.test(name)
            ? undefined
            : 'is not a webhook name (1-64 letters, digits, "_", "." or "-", as in WEBHOOK_SECRETS)';
    if (problem !== undefined) {
      ctx.addIssue({ code: 'custom', message: `entry ${index + 1} ${problem}` });
      return z.NEVER;
    }
    if (!names.includes(name)) names.push(name);
  }
  return names;
});

/** Whose events the tray applies (docs/receiver.md#what-a-standard-webhooks-sender-gets). */
export const trayPlatformShape = {
  /**
   * The webhooks (names of the receiver's WEBHOOK_SECRETS) whose events are the platform's, and
   * so change the tray: typically its regions. Another webhook's events are stored as `foreign`
   * and applied never. Unset: every delivery signed with the platform's scheme is the platform's,
   * and no Standard Webhooks delivery is.
   */
  TRAY_PLATFORM_WEBHOOKS: platformWebhooks.optional(),
};
