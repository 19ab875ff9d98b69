import { z } from 'zod';
import { positiveInt } from './env-types.ts';
import { secureUrl } from './secure-url.ts';

const optionalText = (what: string, min = 1) =>
  z
    .string()
    .min(min, { error: `expected ${what}` })
    .optional();

/** Variables of the tray service's admin API, moderation, operator tools. */
export const trayAdminShape = {
  /**
   * Shared secret for operators and scripts (`Authorization: Bearer <ADMIN_TOKEN>`). Unset: only
   * user JWTs carrying the admin role are admitted. At least 32 characters so it cannot be guessed.
   */
  ADMIN_TOKEN: optionalText('at least 32 characters (e.g. `openssl rand -hex 32`)', 32),
  /** The JWT claim holding the user's role(s): a string or an array of strings. */
  ADMIN_ROLE_CLAIM: z
    .string()
    .regex(/^[A-Za-z0-9_.:/-]{1,100}$/, { error: 'expected a claim name such as "role" or "roles"' })
    .default('role'),
  /** The role value that makes a user an admin. */
  ADMIN_ROLE: z.string().min(1).max(100).default('admin'),
  /** Default and maximum page size of the admin list endpoints. */
  ADMIN_LIST_DEFAULT_LIMIT: positiveInt(50, 500),
  ADMIN_LIST_MAX_LIMIT: positiveInt(500, 10_000),
  /** Blocklisted words, comma separated (`*word*` matches anywhere inside text; see README). */
  MODERATION_WORDS: z.string().optional(),
  /** A UTF-8 file with one blocklisted word per line (`#` starts a comment). */
  MODERATION_WORDS_FILE: optionalText('a file path'),
  /** Default matching mode of blocklisted words (docs/operations.md#moderation, `isMatchExactWord`). */
  MODERATION_MATCH: z
    .enum(['exact', 'contains'], { error: 'expected "exact" (whole words) or "contains" (anywhere in text)' })
    .default('exact'),
  /** Where decisions are POSTed as JSON; unset: decisions are only stored. */
  MODERATION_WEBHOOK_URL: secureUrl().optional(),
  /** Delivery attempts per decision before it is left failed (exponential backoff from the delay). */
  MODERATION_WEBHOOK_ATTEMPTS: positiveInt(10, 100),
  MODERATION_WEBHOOK_BACKOFF_MS: positiveInt(1_000, 3_600_000),
  MODERATION_WEBHOOK_TIMEOUT_MS: positiveInt(5_000, 60_000),
};
