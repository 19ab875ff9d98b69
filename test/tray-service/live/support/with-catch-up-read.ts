import type { TrayStorage } from '../../../../tray-service/storage/port.ts';

type LatestClear = TrayStorage['clears']['latest'];

/**
 * The storage with the first read of every stream catch-up (`clears.latest`) going through
 * `read`, which gets the real read to call: the live tests hold a catch-up there (to let a live
 * change or an outage happen first) or fail it once. Everything else is the storage itself.
 */
export function withCatchUpRead(
  storage: TrayStorage,
  read: (userId: string, real: LatestClear) => ReturnType<LatestClear>,
): TrayStorage {
  const real: LatestClear = (userId) => storage.clears.latest(userId);
  const clears = new Proxy(storage.clears, {
    get: (target, prop, receiver) =>
      prop === 'latest' ? (userId: string) => read(userId, real) : Reflect.get(target, prop, receiver),
  });
  return new Proxy(storage, {
    get: (target, prop, receiver) => (prop === 'clears' ? clears : Reflect.get(target, prop, receiver)),
  });
}
