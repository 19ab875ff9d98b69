import type { TrayStorage } from '../../../../tray-service/storage/port.ts';

type CountInboxes = NonNullable<TrayStorage['inbox']>['countInboxes'];

/** The storage with every count of the live streams (`inbox.countInboxes`) going through `count`. */
function withCounts(
  storage: TrayStorage,
  count: (real: CountInboxes, ...args: Parameters<CountInboxes>) => ReturnType<CountInboxes>,
): TrayStorage {
  const inbox = storage.inbox;
  if (!inbox) throw new Error('the storage has no inbox counts');
  const real: CountInboxes = (...args) => inbox.countInboxes(...args);
  const counted = new Proxy(inbox, {
    get: (target, prop, receiver) =>
      prop === 'countInboxes'
        ? (...args: Parameters<CountInboxes>) => count(real, ...args)
        : Reflect.get(target, prop, receiver),
  });
  return new Proxy(storage, {
    get: (target, prop, receiver) => (prop === 'inbox' ? counted : Reflect.get(target, prop, receiver)),
  });
}

/** The live streams' counts of a storage, each counted, the next one held on request. */
export interface HeldCounts {
  /** The storage to hand the live tray (`storage()` read once the suite has started). */
  storage(): TrayStorage;
  /** Counts asked for since the suite started, or since set to 0. */
  calls: number;
  /** Holds the next count until `answer()`; `began` resolves once it has started. */
  hold(): { began: Promise<void>; answer: () => void };
}

export function heldCounts(storage: () => TrayStorage): HeldCounts {
  let gate: { started: () => void; until: Promise<void> } | undefined;
  const counts: HeldCounts = {
    calls: 0,
    storage: () =>
      withCounts(storage(), async (real, ...args) => {
        counts.calls += 1;
        const held = gate;
        gate = undefined;
        if (held) {
          held.started();
          await held.until;
        }
        return real(...args);
      }),
    hold() {
      let started: () => void = () => undefined;
      const began = new Promise<void>((resolve) => (started = resolve));
      let answer: () => void = () => undefined;
      gate = { started, until: new Promise<void>((resolve) => (answer = resolve)) };
      return { began, answer };
    },
  };
  return counts;
}
