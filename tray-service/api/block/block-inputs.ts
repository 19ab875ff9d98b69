import { z } from 'zod';

/** 4.1: "up to 20 ids" per check. */
export const CHECK_LIST_MAX = 20;

/** A user id as clients send it: the document types it as a number, real ids are strings (docs/contract.md#block-list-legacy-beta-deprecated). */
const userId = z
  .union(
    [
      z.string().min(1).max(256),
      z
        .number()
        .int()
        .nonnegative()
        .refine((n) => Number.isSafeInteger(n)),
    ],
    { error: 'expected a user id (a non-empty string or a whole number)' },
  )
  .transform(String);

export const blockMemberBody = z.object({ blockUserId: userId }, { error: 'expected a JSON object' });

export const blockListBody = z.object(
  {
    paginationToken: z
      .object(
        { netid_uid: z.string({ error: 'expected a string' }), blocked_userId: userId },
        { error: 'expected the paginationToken object of the previous page' },
      )
      .nullable()
      .optional(),
  },
  { error: 'expected a JSON object' },
);

export const checkListQuery = z.object({
  checkList: z
    .union([z.string(), z.array(z.string())], {
      error: 'expected 1 to 20 user ids (repeat checkList per id)',
    })
    .transform((value) => (Array.isArray(value) ? value : [value]))
    .refine((ids) => ids.length >= 1 && ids.length <= CHECK_LIST_MAX, {
      error: `expected 1 to ${CHECK_LIST_MAX} user ids (repeat checkList per id)`,
    })
    .refine((ids) => ids.every((id) => id.length >= 1 && id.length <= 256), {
      error: 'expected non-empty user ids',
    }),
});
