import { z } from 'zod';
import { intInRange, positiveInt } from './env-types.ts';
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
  /** The most events one admin export may send; a filter matching more is refused (narrow it). */
  ADMIN_EXPORT_MAX_ROWS: positiveInt(1_000_000, 100_000_000),
  /** Admin exports running at once per instance (each holds a storage cursor while its client reads). */
  ADMIN_EXPORTS_MAX: positiveInt(2, 100),
  /** Open live tails per admin per instance (ADMIN_TOKEN's holders count as one admin). */
  ADMIN_TAILS_PER_ADMIN: positiveInt(10, 1_000),
  /** Replays of a filter running at once per instance. */
  REPLAY_MAX_RUNNING: positiveInt(2, 100),
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
  /**
   * Delivery attempts per decision before it is left failed: waits double from the delay up to an
   * hour (DECISION_MAX_BACKOFF_MS), so the last attempt is at most (attempts - 1) hours later.
   */
  MODERATION_WEBHOOK_ATTEMPTS: positiveInt(10, 100),
  MODERATION_WEBHOOK_BACKOFF_MS: positiveInt(1_000, 3_600_000),
  MODERATION_WEBHOOK_TIMEOUT_MS: intInRange(5_000, 100, 60_000),
};
