/**
 * At most `max` of one kind of work at once on this instance, per key (an admin) or for all
 * (one key): `take` gives a slot's release, or undefined when every slot is held. Work that holds
 * a connection, a database cursor or a replay's writes is capped so one admin, or a script gone
 * wrong, cannot take the instance's whole capacity.
 */
export interface ConcurrencySlots {
  take(key?: string): (() => void) | undefined;
}

export function createConcurrencySlots(max: number): ConcurrencySlots {
  const held = new Map<string, number>();
  return {
    take(key = '') {
      const count = held.get(key) ?? 0;
      if (count >= max) return undefined;
      held.set(key, count + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(key) ?? 1) - 1;
        if (left === 0) held.delete(key);
        else held.set(key, left);
      };
    },
  };
}
