/**
 * A post, comment or reaction the platform deleted (post.didDelete, comment.didDelete,
 * reaction.didRemove): kept as a tombstone for the records' retention, so the actions it voids
 * leave their records whenever they arrive (docs/tray-rules.md#inbox).
 */
export interface Removal {
  kind: 'post' | 'comment' | 'reaction';
  /** The deleted post's, comment's or reaction's id. */
  id: string;
  /** The post it was on (for a post, itself): where the records it changes are. */
  postId: string;
  /** Epoch ms of the deletion on the platform (deletedAt, removedAt). */
  at: number;
}
