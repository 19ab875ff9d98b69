/**
 * A post, comment or reaction the platform deleted (post.didDelete, comment.didDelete,
 * reaction.didRemove): kept as a tombstone for the records' retention, and past it while a record
 * may still take what it voids, so the actions it voids leave their records whenever they arrive
 * (docs/tray-rules.md#inbox).
 */
export interface Removal {
  kind: 'post' | 'comment' | 'reaction';
  /** The deleted post's, comment's or reaction's id. */
  id: string;
  /** The post it was on (for a post, itself): where the records it changes are. */
  postId: string;
  /** Epoch ms of the deletion on the platform (deletedAt, removedAt). */
  at: number;
  /**
   * The community a deleted post was on (absent on a user feed, and for comments and reactions):
   * its `post` records are where the post would land again if it arrived after the removal, so the
   * tombstone lives as long as they can (docs/storage.md#kept-actions-live-as-long-as-their-records).
   */
  communityId?: string;
}
