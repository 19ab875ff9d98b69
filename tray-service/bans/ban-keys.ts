/**
 * Redis keys of the published ban state. The braces are a Redis Cluster hash tag: the three keys
 * live in one slot, so the publishing script may touch them together.
 */
export function banKeys(prefix: string) {
  return {
    /** Hash userId -> banRank of the newest change published. */
    rank: `{${prefix}}:rank`,
    /** Set of the user ids currently banned: what API instances load. */
    banned: `{${prefix}}:banned`,
    /** Counter bumped on every change of the set, so an instance reloads only after a change. */
    version: `{${prefix}}:version`,
  };
}
