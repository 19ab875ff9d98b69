import { z } from 'zod';
import { MAX_USER_ID_LENGTH } from '../../domain/id-limits.ts';
import { isUsableUserId } from '../../domain/user-id.ts';
import { isStorable, NOT_STORABLE, storableText } from '../../domain/stored-text.ts';
import { documentedAs } from './query-values.ts';
import { bodyError, queryError } from './unknown-keys.ts';

/** The legacy block list's inputs and outputs (docs/contract.md#block-list-legacy-beta-deprecated). */

/** 4.1: "up to 20 ids" per check. */
export const CHECK_LIST_MAX = 20;

/**
 * A user id as clients send it: the document types it as a number, real ids are strings. Any id
 * storage could hold: what DELETE and a page's token take, so an entry stored before POST refused
 * ids no token can name can still be removed and paged past.
 */
const storedUserId = z
  .union(
    [
      storableText(z.string().min(1).max(MAX_USER_ID_LENGTH)),
      z
        .number()
        .int()
        .nonnegative()
        .refine((n) => Number.isSafeInteger(n)),
    ],
    { error: 'expected a user id (a non-empty string or a whole number)' },
  )
  .transform(String)
  .meta({ description: 'A user id; numbers are read as their decimal string' });

/** A user id POST blocks: one no token can name (spaces only, an invisible or bidi character) would read as another user. */
const userId = storedUserId
  .refine(isUsableUserId, { error: 'expected a user id a token can name' })
  .meta({ description: 'A user id a token can name; numbers are read as their decimal string' });

/** POST /block/members: one user per call. */
export const blockMemberBody = z.strictObject({ blockUserId: userId }, bodyError);

/** DELETE /block/members: one user per call, any id an entry may hold. */
export const unblockMemberBody = z.strictObject({ blockUserId: storedUserId }, bodyError);

/** One entry of a block list, and the cursor of the next page. */
export const blockEntry = z.strictObject({
  blocked_userId: z.string(),
  netid_uid: z.string().meta({ description: '`${NETWORK_ID}_${ownerUserId}`' }),
});

/** POST /block: the previous page's paginationToken, or nothing for the first page. */
export const blockListBody = z.strictObject(
  {
    // Strict too: a token is an entry of a page exactly, and anything more is no token a page handed out.
    paginationToken: z
      .strictObject(
        { netid_uid: storableText(z.string({ error: 'expected a string' })), blocked_userId: storedUserId },
        { error: 'expected the paginationToken object of the previous page' },
      )
      .nullable()
      .optional(),
  },
  bodyError,
);

/** GET /block/members?checkList=a&checkList=b. */
export const checkListQuery = z.strictObject(
  {
    checkList: z
      .union([z.string(), z.array(z.string())], {
        error: 'expected 1 to 20 user ids (repeat checkList per id)',
      })
      .transform((value) => (Array.isArray(value) ? value : [value]))
      .refine((ids) => ids.length >= 1 && ids.length <= CHECK_LIST_MAX, {
        error: `expected 1 to ${CHECK_LIST_MAX} user ids (repeat checkList per id)`,
      })
      .refine((ids) => ids.every((id) => id.length >= 1), { error: 'expected non-empty user ids' })
      // Its own message: a long id is not an empty one.
      .refine((ids) => ids.every((id) => id.length <= MAX_USER_ID_LENGTH), {
        error: `expected user ids of at most ${MAX_USER_ID_LENGTH} characters`,
      })
      .refine((ids) => ids.every(isStorable), { error: NOT_STORABLE })
      .meta({
        // One value or several: on the wire, a repeated parameter (form, exploded) is an array.
        param: { style: 'form', explode: true },
        ...documentedAs({
          type: 'array',
          minItems: 1,
          maxItems: CHECK_LIST_MAX,
          items: { type: 'string', minLength: 1, maxLength: MAX_USER_ID_LENGTH },
        }),
      }),
  },
  queryError(),
);

/** POST /block: 20 entries a page. */
export const blockListPage = z.strictObject({
  results: z.array(blockEntry).max(20),
  paginationToken: blockEntry.nullable().meta({ description: 'null on the last page' }),
});

/** POST and DELETE /block/members. */
export const blockStatusBody = z.strictObject({ status: z.literal('success') });

/** GET /block/members: each given user id mapped to true when the caller has blocked that user. */
export const checkListBody = z
  .record(z.string(), z.boolean())
  .meta({ description: 'Each given user id mapped to true when the caller has blocked that user' });

export type BlockListPage = z.infer<typeof blockListPage>;
export type BlockStatusBody = z.infer<typeof blockStatusBody>;
export type CheckListBody = z.infer<typeof checkListBody>;
