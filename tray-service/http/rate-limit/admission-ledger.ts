/**
 * This instance's knowledge of each caller's standing under the per-user limit, from the answers
 * of the limiter (Redis): how many calls were left in the window and until when. A read whose
 * caller is well within the limit may start before its own call is counted (limitPerUserAhead):
 * the Redis round trip then overlaps the storage read instead of preceding it, and the call is
 * still counted and still refused with 429 when over the limit.
 *
 * What that costs at worst: another instance may have spent the caller's calls since this one
 * last heard, so a read may start and then be refused. Reads go ahead only while the caller had
 * more than a reserve left (a tenth of the limit), at most `maxAhead` at once; a refusal teaches
 * the ledger that nothing is left until the window ends, so every later call waits for its count
 * again. A caller over the limit thus costs storage at most `maxAhead` reads per instance and
 * window, and none at all where one instance serves them.
 */
export interface AdmissionLedger {
  /** Whether a read of `userId` may start before its call is counted. */
  mayGoAhead(userId: string): boolean;
  /** A read of `userId` went ahead; the returned function says its call has been counted. */
  wentAhead(userId: string): () => void;
  /** What counting a call of `userId` said: calls left in the window (0: refused), ms until it ends. */
  learned(userId: string, remaining: number, msBeforeNext: number): void;
}

export interface AdmissionLedgerOptions {
  /** Calls per user per window (the limiter's points). */
  points: number;
  /** The window's length (the limiter's duration). */
  windowMs: number;
  /** Reads of one user that may be ahead of their count at once. */
  maxAhead?: number;
  /** Users remembered; the oldest is forgotten first (and then waits for its count again). */
  maxUsers?: number;
  /** Epoch ms; tests pin it. */
  now?: () => number;
}

interface Standing {
  remaining: number;
  until: number;
  ahead: number;
}

export function createAdmissionLedger(options: AdmissionLedgerOptions): AdmissionLedger {
  const reserve = Math.max(1, Math.ceil(options.points / 10));
  const maxAhead = options.maxAhead ?? 2;
  const maxUsers = options.maxUsers ?? 10_000;
  const now = options.now ?? Date.now;
  const standings = new Map<string, Standing>();

  const current = (userId: string): Standing | undefined => {
    const standing = standings.get(userId);
    if (standing && now() >= standing.until && standing.ahead === 0) {
      standings.delete(userId);
      return undefined;
    }
    return standing;
  };

  return {
    mayGoAhead(userId) {
      const standing = current(userId);
      return (
        standing !== undefined &&
        now() < standing.until &&
        standing.ahead < maxAhead &&
        standing.remaining - standing.ahead > reserve
      );
    },
    wentAhead(userId) {
      const standing = current(userId);
      if (!standing) return () => undefined;
      standing.ahead += 1;
      let counted = false;
      return () => {
        if (counted) return;
        counted = true;
        standing.ahead -= 1;
      };
    },
    learned(userId, remaining, msBeforeNext) {
      const standing = standings.get(userId);
      const until = now() + msBeforeNext;
      if (standing) {
        // Answers may arrive out of order: within one window the count only grows, so the fewest
        // calls left is the truest; an answer ending half a window or more later is of a new one.
        const newWindow = until >= standing.until + options.windowMs / 2;
        standing.remaining = newWindow ? remaining : Math.min(standing.remaining, remaining);
        standing.until = newWindow ? until : Math.max(standing.until, until);
        return;
      }
      // Map keeps insertion order: the first key is the oldest, dropped when full.
      if (standings.size >= maxUsers) standings.delete(standings.keys().next().value as string);
      standings.set(userId, { remaining, until, ahead: 0 });
    },
  };
}
