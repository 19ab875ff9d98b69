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
