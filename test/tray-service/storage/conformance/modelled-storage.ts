import { expect } from 'chai';
import type { Activity, MembershipChange } from '../../../../tray-service/domain/activity.ts';
import { ReferenceTray, type TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import type { ConformanceContext } from './conformance-case.ts';
import { toldDifferences, toldRecords } from './told-records.ts';
import { differences, modelSnapshot, storageSnapshot } from './tray-snapshot.ts';

/**
 * A case's storage and the reference tray side by side: every operation goes to both, so a case
 * can assert concrete records and, at the end, that each tray it touched is the model's whole.
 */
export interface ModelledStorage {
  readonly communityId: string;
  readonly model: ReferenceTray;
  apply(operation: TrayOperation): Promise<void>;
  posts(list: Activity[], now?: number): Promise<void>;
  personal(list: Activity[], now?: number): Promise<void>;
  membership(user: string, active: boolean, minute: number, now?: number): Promise<void>;
  changes(list: MembershipChange[], now?: number): Promise<void>;
  /** The user's unexpired records, newest first (one v3 page). */
  records(user: string, now?: number): Promise<TrayRecord[]>;
  record(user: string, verb: TrayRecord['verb'], now?: number): Promise<TrayRecord | undefined>;
  /** Fails naming each difference between the user's tray in storage and in the model. */
  expectModel(user: string, now?: number): Promise<void>;
}

export function modelledStorage(context: ConformanceContext, community = 'c-hike'): ModelledStorage {
  const communityId = context.id(community);
  const model = new ReferenceTray({ retentionDays: RETENTION_DAYS });
  const told = toldRecords();
  const apply = async (operation: TrayOperation) => {
    model.apply(operation);
    await applyOperation(context.storage, operation, (now) =>
      context.write(now, { onWritten: told.onWritten }),
    );
    // What the write told the live streams is the record as the model now has it, inbox state too.
    const found = toldDifferences(told.take(), model, operation.now);
    if (found.length > 0) expect.fail(`${operation.kind} told onWritten:\n${found.join('\n')}`);
  };
  const records = async (user: string, now = NOW) =>
    (await context.storage.records.pageAfter(context.id(user), undefined, 100, now)).records;
  return {
    communityId,
    model,
    apply,
    posts: (list, now = NOW) => apply({ kind: 'posts', communityId, posts: list, now }),
    personal: (list, now = NOW) => apply({ kind: 'personal', activities: list, now }),
    membership: (user, active, minute, now = NOW) =>
      apply({
        kind: 'membership',
        changes: [{ communityId, userId: context.id(user), active, at: at(minute) }],
        now,
      }),
    changes: (list, now = NOW) => apply({ kind: 'membership', changes: list, now }),
    records,
    async record(user, verb, now = NOW) {
      return (await records(user, now)).find((record) => record.verb === verb);
    },
    async expectModel(user, now = NOW) {
      const userId = context.id(user);
      const found = differences(
        await storageSnapshot(context.storage, userId, now, 0),
        modelSnapshot(model, userId, now, 0),
      );
      if (found.length > 0) expect.fail(`${userId}'s tray differs from the model:\n${found.join('\n')}`);
    },
  };
}
