import type { Db } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';
import type { BurstBody } from './burst.ts';
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

/** Not compared on a `post` record of a member who missed some of the community's posts (reference-tray-model.ts). */
const looseFields = new Set<string>(['actorsCount', 'actorIds', 'actorNames']);

/**
 * Reads every tray record and compares it with the reference model of `events` (the bodies the
 * worker processed, in send order): records missing, records nobody caused, and each compared
 * field. A job applied twice would show as a wrong actorsCount or a changed newest action.
 */
export async function checkTrayAgainstModel(db: Db, events: readonly BurstBody[]): Promise<TrayCheck> {
  const expected = referenceTray(events.map((event) => JSON.parse(event.body) as ModelEnvelope));
  const stored = await db.collection<TrayRecordDoc>(TRAY_RECORDS).find({}).toArray();
  const mismatches: TrayMismatch[] = [];
  const seen = new Set<string>();
  for (const doc of stored) {
    seen.add(doc._id);
    const want = expected.get(doc._id);
    if (!want) {
      mismatches.push({ key: doc._id, field: 'record', expected: 'absent', actual: 'present' });
      continue;
    }
    const actual = comparable(doc);
    for (const field of compared) {
      if (want.actorsLoose && looseFields.has(field)) continue;
      if (JSON.stringify(want[field]) !== JSON.stringify(actual[field])) {
        mismatches.push({ key: doc._id, field, expected: want[field], actual: actual[field] });
      }
    }
  }
  for (const key of expected.keys()) {
    if (!seen.has(key)) mismatches.push({ key, field: 'record', expected: 'present', actual: 'absent' });
  }
  const users = new Set([...expected.values()].map((record) => record.userId));
  return { records: expected.size, users: users.size, mismatches };
}

/** The stored record in the model's terms (public fields; actor snapshots reduced to id and name). */
function comparable(doc: TrayRecordDoc): Partial<Record<(typeof compared)[number], unknown>> {
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
