import type { StreamSlots } from './stream-slots.ts';

/** Renewals a heartbeat has in flight at once (renewLeases). */
export const RENEWALS_IN_FLIGHT = 1_000;

/** The lease of one open stream: its user's slot set and its own id. */
export interface Lease {
  readonly userId: string;
  readonly streamId: string;
}

/**
 * Renews the leases of every open stream of an instance (at each heartbeat), RENEWALS_IN_FLIGHT at
 * a time. Sent all at once, each renewal waited behind every one sent before it on the one
 * connection: with 60,000 streams a round took 1.1-1.9 s and the later renewals ran past a Redis
 * call's budget (1 s), failed, and tripped the breaker every other call of that connection shares
 * (rate limits, tickets, publishes; BENCHMARKS.md, "Live tray"). `replaced` is told the index of
 * each lease a newer stream took (its holder ends the stream); a renewal that fails is left to the
 * next heartbeat. Answers how many failed.
 */
export async function renewLeases(
  slots: Pick<StreamSlots, 'renew'>,
  leases: readonly Lease[],
  replaced: (index: number) => void,
): Promise<number> {
  let failed = 0;
  for (let start = 0; start < leases.length; start += RENEWALS_IN_FLIGHT) {
    const batch = leases.slice(start, start + RENEWALS_IN_FLIGHT);
    await Promise.all(
      batch.map((lease, offset) =>
        slots.renew(lease.userId, lease.streamId).then(
          (kept) => {
            if (!kept) replaced(start + offset);
          },
          () => {
            failed += 1;
          },
        ),
      ),
    );
  }
  return failed;
}
