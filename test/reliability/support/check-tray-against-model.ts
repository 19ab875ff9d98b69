import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { readAll } from '../../tray-service/worker/worker-harness.ts';
import type { BurstBody } from './burst.ts';
import { plainRecordKey } from './plain-record-key.ts';
import { referenceTray, type ModelEnvelope, type ModelRecord } from './reference-tray-model.ts';

/** One difference: a field of a record, or `record` itself when it is missing or unexpected. */
export interface TrayMismatch {
  readonly key: string;
  readonly field: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

export interface TrayCheck {
  /** Records the model expects (each compared field by field). */
  readonly records: number;
  /** Users the model expects records for. */
  readonly users: number;
  readonly mismatches: readonly TrayMismatch[];
}

const compared = [
  'userId',
  'verb',
  'targetId',
  'targetType',
  'parentTargetId',
  'actorsCount',
  'actorIds',
  'actorNames',
  'lastActionId',
  'lastActionSegmentNo',
  'lastUpdate',
  'hasRead',
] as const satisfies readonly (keyof ModelRecord)[];

/** What the check reads of a stored record: its key and the fields readers see. */
export type CheckedRecord = Pick<
  TrayRecord,
  | 'key'
  | 'userId'
  | 'verb'
  | 'targetId'
  | 'targetType'
  | 'parentTargetId'
  | 'actors'
  | 'actorsCount'
  | 'lastActionId'
  | 'lastActionSegmentNo'
  | 'lastUpdate'
  | 'hasRead'
>;

/**
 * Compares stored records with the reference model of `events` (the bodies the worker processed,
 * in send order): records missing, records nobody caused, and each compared field. A job applied
 * twice would show as a wrong actorsCount or a changed newest action.
 */
export function compareTrayWithModel(
  stored: readonly CheckedRecord[],
  events: readonly BurstBody[],
): TrayCheck {
  const expected = referenceTray(events.map((event) => JSON.parse(event.body) as ModelEnvelope));
  const mismatches: TrayMismatch[] = [];
  const seen = new Set<string>();
  for (const record of stored) {
    // The stored key escapes `_` inside ids; the model joins them plainly.
    const key = plainRecordKey(record.key);
    seen.add(key);
    const want = expected.get(key);
    if (!want) {
      mismatches.push({ key, field: 'record', expected: 'absent', actual: 'present' });
      continue;
    }
    const actual = comparable(record);
    for (const field of compared) {
      if (JSON.stringify(want[field]) !== JSON.stringify(actual[field])) {
        mismatches.push({ key, field, expected: want[field], actual: actual[field] });
      }
    }
  }
  for (const key of expected.keys()) {
    if (!seen.has(key)) mismatches.push({ key, field: 'record', expected: 'present', actual: 'absent' });
  }
  const users = new Set([...expected.values()].map((record) => record.userId));
  return { records: expected.size, users: users.size, mismatches };
}

/**
 * The users whose trays the model is about: its recipients and every actor it names. The storage
 * port reads one user's tray at a time, so a record of a user the events never name is not seen.
 */
export function usersOfModel(events: readonly BurstBody[]): string[] {
  const expected = referenceTray(events.map((event) => JSON.parse(event.body) as ModelEnvelope));
  return [...new Set([...expected.values()].flatMap((record) => [record.userId, ...record.actorIds]))];
}

/**
 * Every unexpired record of the model's users and of `alsoUsers` (users the events name in other
 * roles, so a record nobody caused shows for them too), through the storage port.
 */
export async function readModelTrays(
  storage: TrayStorage,
  events: readonly BurstBody[],
  alsoUsers: readonly string[] = [],
): Promise<TrayRecord[]> {
  const users = new Set([...usersOfModel(events), ...alsoUsers]);
  const trays = await Promise.all([...users].map((userId) => readAll(storage, userId)));
  return trays.flat();
}

/**
 * Reads the trays through the storage port (readModelTrays) and compares them with the model: the
 * same check whichever adapter the processes wrote with.
 */
export async function checkTrayAgainstModel(
  storage: TrayStorage,
  events: readonly BurstBody[],
  alsoUsers: readonly string[] = [],
): Promise<TrayCheck> {
  return compareTrayWithModel(await readModelTrays(storage, events, alsoUsers), events);
}

/** The stored record in the model's terms (public fields; actor snapshots reduced to id and name). */
function comparable(doc: CheckedRecord): Partial<Record<(typeof compared)[number], unknown>> {
  return {
    userId: doc.userId,
    verb: doc.verb,
    targetId: doc.targetId,
    targetType: doc.targetType,
    parentTargetId: doc.parentTargetId,
    actorsCount: doc.actorsCount,
    actorIds: doc.actors.map((actor) => actor.userId),
    actorNames: doc.actors.map((actor) => actor.name),
    lastActionId: doc.lastActionId,
    lastActionSegmentNo: doc.lastActionSegmentNo,
    lastUpdate: doc.lastUpdate,
    hasRead: doc.hasRead,
  };
}
