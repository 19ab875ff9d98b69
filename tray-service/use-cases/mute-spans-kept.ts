import { MAX_SNOOZE_DAYS } from '../domain/snooze-mark.ts';

/**
 * How long an ended mute span is kept: the records' retention (90 days, which also bounds a
 * snooze), so a late delivery dated inside the span stays held back (docs/tray-rules.md#inbox).
 */
export const MUTE_SPANS_KEPT_DAYS = MAX_SNOOZE_DAYS;
