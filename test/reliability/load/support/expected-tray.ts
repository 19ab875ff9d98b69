import { plainRecordKey } from '../../support/plain-record-key.ts';

/** One record change a sequence must cause: `actorId` acted (`actionId`, at `at`) on record `key` of `userId`. */
export interface ExpectedDelivery {
  readonly key: string;
  readonly userId: string;
  readonly actorId: string;
  readonly actionId: string;
  readonly at: number;
}

/** The fields of a tray record the load test compares (tray-service/domain/tray-record.ts). */
export interface ExpectedRecord {
  readonly userId: string;
  /** Distinct actors (docs/contract.md#limits). */
  readonly actorsCount: number;
  /** The newest action's id: the newest action wins, whatever order the jobs ran in. */
  readonly lastActionId: string;
  /** The 3 newest distinct actors, newest first (docs/contract.md#tray-records). */
  readonly actorIds: readonly string[];
}

/**
 * The reference model: folds the deliveries into the records the tray must hold, written without
 * the worker's code (no claims, no versions) so a double application or a lost update shows as a
 * different count or action. Every action of a sequence has its own time, so "newest" is exact.
 */
export function expectedTray(deliveries: readonly ExpectedDelivery[]): Map<string, ExpectedRecord> {
  const folded = new Map<string, { userId: string; actors: Map<string, number>; last: ExpectedDelivery }>();
  for (const delivery of deliveries) {
    const record = folded.get(delivery.key) ?? { userId: delivery.userId, actors: new Map(), last: delivery };
    record.actors.set(delivery.actorId, Math.max(record.actors.get(delivery.actorId) ?? 0, delivery.at));
    if (delivery.at >= record.last.at) record.last = delivery;
    folded.set(delivery.key, record);
  }
  const expected = new Map<string, ExpectedRecord>();
  for (const [key, { userId, actors, last }] of folded) {
    const newestFirst = [...actors].sort((a, b) => b[1] - a[1]).map(([actorId]) => actorId);
    expected.set(key, {
      userId,
      actorsCount: actors.size,
      lastActionId: last.actionId,
      actorIds: newestFirst.slice(0, 3),
    });
  }
  return expected;
}

/** A stored record as read back through the storage port for the comparison. */
export interface StoredRecord {
  key: string;
  userId: string;
  actorsCount: number;
  lastActionId: string;
  actors: { userId: string }[];
}

export interface TrayComparison {
  expected: number;
  stored: number;
  /** Records the model has and the tray lacks (a lost update). */
  missing: number;
  /** Records the tray has and the model does not (a notification nobody should get). */
  unexpected: number;
  /** Records whose user, count, last action or newest actors differ (a double or lost application). */
  mismatched: number;
  /** Up to 5 differences, for the failure message. */
  examples: string[];
}

/** Compares the stored records with the model, record by record. */
export function compareTray(
  expected: ReadonlyMap<string, ExpectedRecord>,
  stored: readonly StoredRecord[],
): TrayComparison {
  const examples: string[] = [];
  const note = (text: string) => void (examples.length < 5 && examples.push(text));
  const seen = new Set<string>();
  let unexpected = 0;
  let mismatched = 0;
  for (const record of stored) {
    // The stored key escapes `_` inside ids; the sequence's keys join them plainly.
    const key = plainRecordKey(record.key);
    seen.add(key);
    const want = expected.get(key);
    if (!want) {
      unexpected += 1;
      note(`unexpected ${key}`);
      continue;
    }
    const got: ExpectedRecord = {
      userId: record.userId,
      actorsCount: record.actorsCount,
      lastActionId: record.lastActionId,
      actorIds: record.actors.map((actor) => actor.userId),
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      mismatched += 1;
      note(`${key}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
  }
  const missingKeys = [...expected.keys()].filter((key) => !seen.has(key));
  for (const key of missingKeys) note(`missing ${key}`);
  return {
    expected: expected.size,
    stored: stored.length,
    missing: missingKeys.length,
    unexpected,
    mismatched,
    examples,
  };
}
