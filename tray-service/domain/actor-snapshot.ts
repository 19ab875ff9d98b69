/** An actor as they were when they acted (later renames do not change it). */
export interface ActorSnapshot {
  userId: string;
  name: string;
  imageUrl?: string;
  avatarCustomUrl?: string;
  /** Set only on a deleted user's snapshot (deleted-user.ts); absent on everyone else's. */
  deleted?: true;
  /** Epoch ms of this actor's latest activity on the record. */
  at: number;
}
