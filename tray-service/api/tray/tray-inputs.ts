import { z } from 'zod';
import { trayVerbs } from '../../domain/tray-verb.ts';

const wholeNumber = (max: number) =>
  z
    .string({ error: 'expected one whole number' })
    .regex(/^\d{1,16}$/, { error: 'expected a whole number' })
    .transform(Number)
    .refine((n) => n <= max, { error: `expected at most ${max}` });

/** GET /notifications/v3/history: `startAfter` is the previous page's `nextPage` (docs/contract.md#tray). */
export const historyV3Query = z.object({
  startAfter: wholeNumber(Number.MAX_SAFE_INTEGER).optional(),
  locale: z.string({ error: 'expected one locale tag' }).max(35).optional(),
});

/** GET /notifications/v2/history: 1-based page number (docs/contract.md#tray). */
export const historyV2Query = z.object({
  page: wholeNumber(1_000_000)
    .refine((n) => n >= 1, { error: 'expected a page number from 1' })
    .optional(),
  locale: z.string({ error: 'expected one locale tag' }).max(35).optional(),
});

/** POST /notifications/v2/read: the four verbs of 4.1 plus the mention verbs of 2.3. */
export const readBody = z.object(
  {
    verb: z.enum(trayVerbs, { error: `expected one of ${trayVerbs.join(', ')}` }),
    targetId: z
      .string({ error: 'expected a string' })
      .min(1, { error: 'expected a non-empty string' })
      .max(512),
  },
  { error: 'expected a JSON object' },
);
