import { inFlightBatches } from './in-flight-batches.ts';
import type { StreamSlots } from './stream-slots.ts';

/** The lease of one open stream: its user's slot set and its own id. */
export interface Lease {
  readonly userId: string;
  readonly streamId: string;
}

/**
 * Renews the leases of every open stream of an instance (at each heartbeat), CALLS_IN_FLIGHT at a
 * time (inFlightBatches). `replaced` is told the index of each lease a newer stream took (its
 * holder ends the stream); a renewal that fails is left to the next heartbeat. `stillOpen` is asked
 * just before each renewal is sent: a stream that ended while the earlier batches were renewed has
 * released its slot, and a renewal, which takes a lapsed lease again, would bring it back (the
 * release and a renewal sent before it go in order over the one connection). Answers how many
 * failed.
 */
export async function renewLeases(
  slots: Pick<StreamSlots, 'renew'>,
  leases: readonly Lease[],
  replaced: (index: number) => void,
  stillOpen: (index: number) => boolean = () => true,
): Promise<number> {
  let failed = 0;
  await inFlightBatches(leases, async (lease, index) => {
    if (!stillOpen(index)) return;
    await slots.renew(lease.userId, lease.streamId).then(
      (kept) => {
        if (!kept) replaced(index);
      },
      () => {
        failed += 1;
      },
    );
  });
  return failed;
}
