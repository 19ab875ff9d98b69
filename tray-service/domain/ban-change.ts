/** user.didGlobalBan / user.didGlobalUnban for one user, at the platform's `createdAt` (epoch ms). */
export interface BanChange {
  userId: string;
  banned: boolean;
  at: number;
}

/**
 * One number that orders ban changes of a user: later `createdAt` first, and at an equal
 * `createdAt` the ban above the unban, so the outcome of a tie never depends on arrival order and
 * errs on the side of keeping a banned user out. Stores keep a change only when its rank is
 * higher than the stored one: an older change delivered late, or a redelivery, changes nothing.
 * Epoch milliseconds times two stay far below Number.MAX_SAFE_INTEGER.
 */
export function banRank(change: Pick<BanChange, 'banned' | 'at'>): number {
  return change.at * 2 + (change.banned ? 1 : 0);
}

/** The users whose newest change (by banRank) is a ban, from any number of changes per user. Pure. */
export function bannedUsers(changes: readonly BanChange[]): string[] {
  const newest = new Map<string, BanChange>();
  for (const change of changes) {
    const seen = newest.get(change.userId);
    if (!seen || banRank(change) > banRank(seen)) newest.set(change.userId, change);
  }
  return [...newest.values()].filter((change) => change.banned).map((change) => change.userId);
}
