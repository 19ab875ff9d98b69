import { z } from 'zod';
import { inboxViews } from '../../domain/inbox-view.ts';
import { muteTargetTypes } from '../../domain/mute.ts';
import { MAX_TARGET_ID_LENGTH } from '../../domain/id-limits.ts';
import { isUsableUserId } from '../../domain/user-id.ts';
import {
  ISO_OFFSET_FORMS,
  isoDateTimeProblemMessages,
  parseIsoDateTime,
  TIME_INPUT_EXPECTED,
} from '../../domain/iso-date-time.ts';
import { storedId } from '../../domain/stored-text.ts';
import { bodyError, queryError } from './unknown-keys.ts';

/** The inbox endpoints' inputs and outputs (docs/tray-api.md#the-inbox): the router parses and answers these. */

/**
 * A time input: integer ms since the epoch or an ISO 8601 date-time with its offset, read by the
 * domain's one reader of event and input times (domain/iso-date-time.ts); ms out. A string that is
 * not one is answered with what it lacks (the offset, the time) or what is wrong with it.
 */
const timeInput = z
  .union([z.number().int({ error: 'expected an integer time (ms)' }), z.string().max(80)], {
    error: TIME_INPUT_EXPECTED,
  })
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    const ms = parseIsoDateTime(value);
    if (typeof ms === 'number') return ms;
    ctx.addIssue({
      code: 'custom',
      message: ms === 'not-a-date-time' ? TIME_INPUT_EXPECTED : isoDateTimeProblemMessages[ms],
    });
    return z.NEVER;
  })
  .meta({
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      for (const key of Object.keys(jsonSchema)) Reflect.deleteProperty(jsonSchema, key);
      Object.assign(jsonSchema, {
        oneOf: [{ type: 'integer' }, { type: 'string', format: 'date-time' }],
        description: `Epoch milliseconds or an ISO 8601 date-time with its offset (${ISO_OFFSET_FORMS}); a fraction of any length is kept to the millisecond`,
      });
    },
  });

/** Record keys one call marks at most, duplicates counting once. */
export const MAX_IDS = 100;

/**
 * Entries an `ids` list may hold at most, duplicates included: a longer one is refused by its length
 * alone, before any entry is compared (the records' 256 kB body limit, body-limit.ts, would still
 * let about 65,000 short ones in).
 */
export const MAX_ID_ENTRIES = 1_000;

/** Longer than any record key the service makes (v_tarid_uid of bounded ids). */
const MAX_RECORD_KEY_LENGTH = 1_024;

/** A string that could be a record key at all, by the rule every stored id follows. */
const recordKey = storedId(MAX_RECORD_KEY_LENGTH);

/** Whether a string could be a record key: one that cannot is an unknown id. */
const couldBeKey = (id: string) => recordKey.safeParse(id).success;

/**
 * 1-100 strings; duplicates count once, in at most MAX_ID_ENTRIES entries. A string no record key
 * can be (empty, too long, text storage cannot hold) is an unknown id, ignored like the others
 * (docs/tray-api.md#the-inbox): left out here, so storage is never asked about it.
 */
const recordIds = z
  .array(z.string({ error: 'expected a string' }), {
    error: 'expected an array of record ids',
  })
  .min(1, { error: `expected 1 to ${MAX_IDS} ids` })
  .max(MAX_ID_ENTRIES, {
    error: `expected at most ${MAX_ID_ENTRIES} entries (1 to ${MAX_IDS} ids, duplicates counting once)`,
  })
  .transform((ids, ctx) => {
    const distinct = [...new Set(ids)];
    if (distinct.length >= 1 && distinct.length <= MAX_IDS) return distinct.filter(couldBeKey);
    ctx.addIssue({ code: 'custom', message: `expected 1 to ${MAX_IDS} ids` });
    return z.NEVER;
  })
  .meta({
    description: `1 to ${MAX_IDS} record keys (v_tarid_uid); duplicates count once; one that is not the caller's (unknown, expired, another user's) is ignored`,
  });

const allRecords = z.literal(true, { error: 'expected true' });

/** Exactly one of `ids` and `all`. */
const idsOrAll = <T extends { ids?: unknown; all?: unknown }>(body: T, ctx: z.RefinementCtx) => {
  if (body.ids === undefined && body.all === undefined)
    ctx.addIssue({ code: 'custom', message: 'expected ids or all (one of the two)', path: ['ids'] });
  else if (body.ids !== undefined && body.all !== undefined)
    ctx.addIssue({ code: 'custom', message: 'expected either ids or all, not both', path: ['ids'] });
};

/** POST records/seen. */
export const seenBody = z
  .strictObject({ ids: recordIds.optional(), all: allRecords.optional() }, bodyError)
  .superRefine(idsOrAll)
  .meta({ description: 'Exactly one of ids and all (400 otherwise)' });

/** POST records/archive: `readOnly` only with `all` (false there is what leaving it out says). */
export const archiveBody = z
  .strictObject(
    {
      ids: recordIds.optional(),
      all: allRecords.optional(),
      readOnly: z.boolean({ error: 'expected a boolean' }).optional(),
    },
    bodyError,
  )
  .superRefine((body, ctx) => {
    idsOrAll(body, ctx);
    if (body.readOnly !== undefined && !body.all)
      ctx.addIssue({ code: 'custom', message: 'only with all', path: ['readOnly'] });
  })
  .meta({ description: 'Exactly one of ids and all, and readOnly only with all (400 otherwise)' });

/** POST records/unarchive and records/unsnooze. */
export const idsBody = z.strictObject({ ids: recordIds }, bodyError);

/**
 * POST records/snooze: `until` later than now and at most 90 days on, nor past TRAY_RETENTION_DAYS
 * (markInbox checks it against the clock).
 */
export const snoozeBody = z.strictObject({ ids: recordIds, until: timeInput }, bodyError);

/** GET v3/history's `view`. */
export const viewQuery = z
  .enum(inboxViews, { error: `expected one of ${inboxViews.join(', ')}` })
  .optional()
  .meta({ param: { description: 'Which records: inbox (default), archived, snoozed or all' } });

const muteTarget = {
  targetType: z.enum(muteTargetTypes, { error: `expected one of ${muteTargetTypes.join(', ')}` }),
  targetId: storedId(MAX_TARGET_ID_LENGTH),
};

/**
 * PUT v3/mutes: `until` (optional) later than now and not after year 9999 (putMute checks it). A
 * user muted must be one a token can name (isUsableUserId): `alice\u200B` would read as alice and
 * hold back nothing of hers. Removing takes any id, so a mute stored before this rule can go.
 */
export const putMuteBody = z
  .strictObject({ ...muteTarget, until: timeInput.nullable().optional() }, bodyError)
  .superRefine((body, ctx) => {
    if (body.targetType === 'user' && !isUsableUserId(body.targetId))
      ctx.addIssue({ code: 'custom', message: 'expected a user id a token can name', path: ['targetId'] });
  });

/** DELETE v3/mutes: a JSON body. */
export const muteTargetInput = z.strictObject(muteTarget, bodyError);

/** DELETE v3/mutes: query parameters, for clients whose DELETE carries no body. */
export const muteTargetQuery = z.strictObject(muteTarget, queryError());

/** POST records/*. */
export const updatedBody = z.strictObject({
  data: z.strictObject({
    updated: z.number().int().min(0).meta({ description: 'Records this call changed' }),
  }),
});

/** One mute in force. */
export const muteView = z
  .strictObject({
    targetType: z.enum(muteTargetTypes),
    targetId: z.string(),
    createdAt: z.number().int().meta({ description: 'Epoch ms the mute was put (tray clock)' }),
    until: z.number().int().nullable().meta({ description: 'Epoch ms it ends by itself, or null' }),
  })
  .meta({ id: 'Mute' });

export const mutesBody = z.strictObject({ data: z.array(muteView) });
export const muteBody = z.strictObject({ data: muteView });
export const removedBody = z.strictObject({
  data: z.strictObject({
    removed: z.boolean().meta({ description: 'Whether a mute of the target was in force' }),
  }),
});

export type UpdatedBody = z.infer<typeof updatedBody>;
export type MutesBody = z.infer<typeof mutesBody>;
export type MuteBody = z.infer<typeof muteBody>;
export type RemovedBody = z.infer<typeof removedBody>;
