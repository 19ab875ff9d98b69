/** One index of a collection, declared once beside the collection's queries. */
export interface IndexSpec {
  name: string;
  key: Record<string, 1 | -1>;
  unique?: boolean;
  /** Only documents matching this filter are indexed (a partial index). */
  partialFilterExpression?: Record<string, unknown>;
  /** TTL on expiresAt where the server accepts it */
  expireAfterSeconds?: number;
  /** the query this index serves (one line) */
  serves: string;
}

/** A collection and the indexes its queries need; ensureCollections applies it. */
export interface CollectionSpec {
  name: string;
  indexes: readonly IndexSpec[];
  /**
   * Names of indexes earlier releases declared and this one does not: dropped at start-up, so a
   * database upgraded in place pays no writes for them. Other indexes the server holds (an
   * operator's own) are left alone.
   */
  retiredIndexes?: readonly string[];
}

/**
 * The expiry index of a collection whose documents carry `expiresAt`: the server's TTL deletes them
 * (where it accepts TTL indexes), and purgeExpired's deleteMany({expiresAt <= now}) uses it too.
 */
export const EXPIRY_INDEX: IndexSpec = {
  name: 'expiry',
  key: { expiresAt: 1 },
  expireAfterSeconds: 0,
  serves: 'expiry: the server’s TTL deletes, and deleteMany({expiresAt <= now}) in purgeExpired',
};

/**
 * The expiry index of the group actors, kept actions, mute spans and tombstones, without TTL:
 * they live as long as a record built from or judged by them can, past their own `expiresAt`, so
 * only purgeExpired deletes them (purge-kept-actions.ts, purge-ended-mutes.ts,
 * purge-kept-tombstones.ts), reading the expired ones from it. Same name as EXPIRY_INDEX: start-up re-creates a TTL one an earlier release made as this one.
 */
export const KEPT_EXPIRY_INDEX: IndexSpec = {
  name: 'expiry',
  key: { expiresAt: 1 },
  serves:
    'purgeExpired: find({expiresAt <= now}) in purgeKeptActions, purgeEndedMutes and purgeKeptTombstones, the expired documents it judges',
};
