import type { TrayStorage, WriteContext } from '../../../../tray-service/storage/port.ts';
import type { Capability } from './conformance-adapters.ts';

/**
 * The storage conformance suite's registry. A case is one behaviour of the storage port, written
 * once against the port's types; the runner (storage-conformance.test.ts) runs every registered
 * case against every adapter, so the engines cannot drift apart unnoticed. There is deliberately
 * no way to register a case for one engine, and a case is not told which engine it runs on: what
 * only one engine does is tested in that adapter's own folder (test/tray-service/storage/<engine>/).
 */
export interface ConformanceContext {
  /**
   * The adapter's storage on a database the run's cases share (but for `ownDatabase` cases): cases
   * keep apart by the ids they make with `id` (every query of a user's tray takes the user id).
   */
  readonly storage: TrayStorage;
  /** An id of this case's own, e.g. id('u-ana') -> 'u-ana_k3f9': unique per case and run. */
  id(name: string): string;
  /**
   * The same database as `storage`, opened as a second process of the tray would open it: its own
   * connections and none of `storage`'s in-process state (locks, batching). One per database,
   * shared by the cases on it.
   */
  peer(): Promise<TrayStorage>;
  /** A storage on a fresh database of its own, dropped after the case: for whole-store queries (purge, lists). */
  isolated(): Promise<TrayStorage>;
  /**
   * A write context on the tray's clock `now` (retention 90 days). A case that plays several jobs
   * runs each in its job scope (shared/async/job-scope.ts), as the apply-job use case does.
   */
  write(now: number, extra?: Partial<WriteContext>): WriteContext;
}

export interface ConformanceCase {
  readonly name: string;
  readonly run: (context: ConformanceContext) => Promise<void>;
  /** Mocha timeout for one engine's run of this case (ms); the runner's default otherwise. */
  readonly timeout?: number;
  /** A part of the port the case needs: it runs on the adapters that have it (conformance-adapters.ts). */
  readonly needs?: Capability;
  /**
   * Runs on a database of its own (`storage` and `peer`), dropped after the case, instead of the
   * one the run's cases share: for a case of thousands of writes, which should neither wait on
   * the other cases' data (FerretDB scans a collection for each query it cannot push down to an
   * index, so a shared database slows whatever runs last) nor leave its own to the cases after it.
   */
  readonly ownDatabase?: boolean;
}

const registry = new Map<string, ConformanceCase>();

/** Registers a case for every adapter. Names are unique: they identify the case in the coverage check. */
export function conformanceCase(
  name: string,
  run: (context: ConformanceContext) => Promise<void>,
  options: Pick<ConformanceCase, 'timeout' | 'needs' | 'ownDatabase'> = {},
): void {
  if (registry.has(name)) throw new Error(`conformanceCase: "${name}" is registered twice`);
  registry.set(name, { name, run, ...options });
}

export function registeredCases(): ConformanceCase[] {
  return [...registry.values()];
}
