import type { TrayStorage } from '../../../../tray-service/storage/port.ts';

export type CountInboxes = NonNullable<TrayStorage['inbox']>['countInboxes'];

/** The storage with every count of the live streams (`inbox.countInboxes`) going through `count`. */
export function withCounts(
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
