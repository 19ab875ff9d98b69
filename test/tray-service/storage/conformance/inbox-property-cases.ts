import { expect } from 'chai';
import fc from 'fast-check';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import { activityPost } from '../../../../tray-service/domain/activity-post.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import type { Removal } from '../../../../tray-service/domain/removal.ts';
import { ReferenceTray, type TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';
import { applyInboxOperation, isInboxOperation } from './inbox-operation.ts';
import { modelInboxSnapshot, storageInboxSnapshot } from './inbox-snapshot.ts';
import { operationsOf, scenario } from './model-property-cases.ts';
import { differences, modelSnapshot, storageSnapshot } from './tray-snapshot.ts';

/**
 * The model-based property of the inbox: the sequences of model-property-cases.ts (deliveries,
 * late ones and redeliveries, joins and leaves, deletes, read marks, delete-all, expiry) with
 * seen, archive, unarchive, snooze and unsnooze marks (by ids, another user's and unknown ones
 * among them, and all), wake-ups and removals of what was delivered mixed in, so new activity meets archived and snoozed records;
 * each mark's `updated`, and afterwards every user's four views, both counts and the platform's
 * pages must be the reference tray's.
 */

const RUNS = 25;

type MarkKind = 'seen' | 'archive' | 'archiveRead' | 'unarchive' | 'snooze' | 'unsnooze' | 'wake' | 'removal';

interface MarkSpec {
  /** Where in the sequence (scaled to its length). */
  position: number;
  kind: MarkKind;
  user: number;
  /** Indexes into the mark's user's records then; empty: `all` (where the mark allows it). */
  keys: number[];
  /** One more key, of a record nobody has (ignored by the mark). */
  foreign: boolean;
  /** A snooze's length, or how far past the last operation a wake-up looks (seconds). */
  seconds: number;
}

const markSpec: fc.Arbitrary<MarkSpec> = fc.record({
  position: fc.integer({ min: 0, max: 1000 }).map((n) => n / 1000),
  kind: fc.constantFrom<MarkKind>(
    'seen',
    'archive',
    'archiveRead',
    'unarchive',
    'snooze',
    'unsnooze',
    'wake',
    'wake',
    'removal',
    'removal',
  ),
  /** Which of the users holding records then. */
  user: fc.integer({ min: 0, max: 4 }),
  keys: fc.oneof(fc.constant<number[]>([]), fc.array(fc.nat(), { minLength: 1, maxLength: 4 })),
  foreign: fc.boolean(),
  seconds: fc.integer({ min: 1, max: 8 }),
});

export const inboxScenario = fc.record({
  base: scenario,
  marks: fc.array(markSpec, { minLength: 4, maxLength: 14 }),
});

/**
 * The base sequence with the marks put in at their positions, on the clock of the operation before.
 * A scratch reference tray, run along, picks what a user would mark: a user who has records then,
 * and keys among theirs (maybe with another user's or an unknown one, which the mark ignores).
 */
/** The platform's deletion of what the action did (its post, comment or reaction). */
function removalOf(action: Activity, at: number): Removal {
  const postId = activityPost(action) ?? action.targetId;
  switch (action.verb) {
    case 'post':
      return { kind: 'post', id: action.lastActionId, postId, at };
    case 'comment':
    case 'mentreply':
      return { kind: 'comment', id: action.lastActionId, postId, at };
    case 'reaction':
    case 'mentreact':
      return { kind: 'reaction', id: action.lastActionId, postId, at };
    case 'mention':
      return action.mentionIn === 'comment'
        ? { kind: 'comment', id: action.targetId, postId, at }
        : { kind: 'post', id: postId, postId, at };
  }
}

export function withMarks(
  operations: readonly TrayOperation[],
  userIds: readonly string[],
  marks: readonly MarkSpec[],
) {
  const at = new Map<number, MarkSpec[]>();
  for (const mark of marks) {
    // Later rather than earlier: trays fill up as the sequence goes on.
    const index = Math.min(operations.length - 1, Math.floor(Math.sqrt(mark.position) * operations.length));
    at.set(index, [...(at.get(index) ?? []), mark]);
  }
  const scratch = new ReferenceTray({ retentionDays: RETENTION_DAYS });
  const result: TrayOperation[] = [];
  const push = (operation: TrayOperation) => {
    scratch.apply(operation);
    result.push(operation);
  };
  const delivered: Activity[] = [];
  operations.forEach((operation, index) => {
    push(operation);
    if (operation.kind === 'personal') delivered.push(...operation.activities);
    if (operation.kind === 'posts') delivered.push(...operation.posts);
    for (const mark of at.get(index) ?? []) {
      const now = operation.now;
      const holders = userIds.filter((userId) => scratch.storedRecords(userId).length > 0);
      const userId = (holders.length > 0 ? holders : userIds)[
        mark.user % Math.max(1, holders.length)
      ] as string;
      const own = scratch.storedRecords(userId).map((record) => record.key);
      const ids = own.length === 0 ? [] : mark.keys.map((key) => own[key % own.length] as string);
      if (ids.length > 0 && mark.foreign)
        ids.push(encodeRecordKey({ verb: 'comment', targetId: 'p-0', userId: 'u-nobody' }));
      const idsOrAll = ids.length === 0 ? ('all' as const) : ids;
      switch (mark.kind) {
        case 'seen':
          push({ kind: 'seen', userId, ids: idsOrAll, now });
          break;
        case 'archive':
          push({ kind: 'archive', userId, ids: idsOrAll, now });
          break;
        case 'archiveRead':
          push({ kind: 'archive', userId, ids: 'all', readOnly: true, now });
          break;
        case 'snooze':
          if (ids.length > 0) push({ kind: 'snooze', userId, ids, until: now + mark.seconds * 1_000, now });
          break;
        case 'unarchive':
        case 'unsnooze':
          if (ids.length > 0) push({ kind: mark.kind, userId, ids, now });
          break;
        case 'wake':
          push({ kind: 'wake', now: now + mark.seconds * 1_000 });
          break;
        case 'removal': {
          // The deletion of something delivered so far (its later redeliveries become no-ops).
          const action = delivered[(mark.keys[0] ?? mark.user) % Math.max(1, delivered.length)];
          if (action) push({ kind: 'removal', removals: [removalOf(action, now)], now });
          break;
        }
      }
    }
  });
  return result;
}

/**
 * The property itself: with `removals`, removal marks stay in the sequences (and at least one a
 * run must be applied); without, they are left out.
 */
function inboxProperty(removals: boolean) {
  return async ({ storage, id, write }: ConformanceContext) => {
    let runs = 0;
    const seen = { marked: 0, archived: 0, removals: 0 };
    const start = Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS;
    await fc.assert(
      fc.asyncProperty(inboxScenario, async (run) => {
        const tag = id(`i${runs++}`);
        const base = operationsOf(run.base, tag, start);
        const marks = removals ? run.marks : run.marks.filter((mark) => mark.kind !== 'removal');
        const operations = withMarks(base.operations, base.userIds, marks);
        const since = (operations[Math.floor(operations.length / 2)] as TrayOperation).now;
        const model = new ReferenceTray({ retentionDays: RETENTION_DAYS });
        for (const operation of operations) {
          const expected = model.apply(operation);
          if (operation.kind === 'removal') seen.removals++;
          if (isInboxOperation(operation)) {
            const updated = await applyInboxOperation(storage, operation);
            if (updated !== expected)
              expect.fail(`${operation.kind} at ${operation.now}: updated ${updated}, model ${expected}`);
            seen.marked += updated;
          } else await applyOperation(storage, operation, write);
        }
        for (const userId of base.userIds) {
          const expected = modelSnapshot(model, userId, base.readAt, since);
          const actual = await storageSnapshot(storage, userId, base.readAt, since);
          const found = differences(actual, expected);
          const inbox = modelInboxSnapshot(model, userId, base.readAt);
          seen.archived += inbox.views.archived.flat().length;
          found.push(...differences(await storageInboxSnapshot(storage, userId, base.readAt), inbox));
          if (found.length > 0) expect.fail(`${userId}'s tray at ${base.readAt}:\n${found.join('\n')}`);
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 240_000, markInterruptAsFailure: true },
    );
    expect(seen.marked, 'records marked').to.be.above(RUNS);
    expect(seen.archived, 'archived records compared').to.be.above(0);
    if (removals) expect(seen.removals, 'removals applied').to.be.above(RUNS);
  };
}

conformanceCase(
  'inbox model: with seen, archive, snooze marks and wake-ups among any sequence, every view and count is the reference tray',
  inboxProperty(false),
  { timeout: 300_000, needs: 'inbox' },
);

conformanceCase(
  'inbox model: with removals of what was delivered among the marks too, every view and count is the reference tray',
  inboxProperty(true),
  { timeout: 300_000, needs: 'removals' },
);
