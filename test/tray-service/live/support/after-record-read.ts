import type { TrayStorage } from '../../../../tray-service/storage/port.ts';

/**
 * The storage with every catch-up's record read (`records.changedSince`) followed by `after`, which
 * gets the user: the live tests hold a catch-up there, after it read the tray, while the subscriber
 * drops or a live change arrives. Everything else is the storage itself.
 */
export function afterRecordRead(storage: TrayStorage, after: (userId: string) => Promise<void>): TrayStorage {
  const records = new Proxy(storage.records, {
    get: (target, prop, receiver) =>
      prop === 'changedSince'
        ? async (...args: Parameters<TrayStorage['records']['changedSince']>) => {
            const read = await target.changedSince(...args);
            await after(args[0]);
            return read;
          }
        : Reflect.get(target, prop, receiver),
  });
  return new Proxy(storage, {
    get: (target, prop, receiver) => (prop === 'records' ? records : Reflect.get(target, prop, receiver)),
  });
}

/**
 * A hold for `afterRecordRead`: `hold(userId)` makes that user's catch-ups wait after their read
 * (`hasRead` resolves when one has read) until `open()`, which also ends the hold.
 */
export function createCatchUpHold() {
  let gate: { userId: string; read: () => void; until: Promise<void> } | undefined;
  return {
    after: async (userId: string) => {
      if (gate?.userId !== userId) return;
      gate.read();
      await gate.until;
    },
    hold(userId: string): { hasRead: Promise<void>; open: () => void } {
      const hasRead = Promise.withResolvers<undefined>();
      const until = Promise.withResolvers<undefined>();
      gate = { userId, read: () => hasRead.resolve(undefined), until: until.promise };
      return {
        hasRead: hasRead.promise,
        open: () => {
          gate = undefined;
          until.resolve(undefined);
        },
      };
    },
  };
}
