import type { ActorSnapshot } from './actor-snapshot.ts';

/** One actor's latest action on a record group (tray_target_actors), what grouping is computed from. */
export interface ActorAction {
  actor: Omit<ActorSnapshot, 'at'>;
  /** Epoch ms of the action (the payload's createdAt). */
  at: number;
  /** Id of that action (post, comment or reaction id); breaks ties between equal times. */
  actionId: string;
}
