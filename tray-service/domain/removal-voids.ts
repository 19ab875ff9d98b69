import type { Activity } from './activity.ts';
import { activityPost } from './activity-post.ts';
import type { Removal } from './removal.ts';

type ActionFields = Pick<Activity, 'verb' | 'targetId' | 'parentTargetId' | 'lastActionId' | 'mentionIn'>;

/**
 * Whether the removal voids this action: the action is the deleted thing itself, or it is on it.
 * A deleted post voids everything on the post and its comments (the `post` action, comments,
 * replies, reactions, mentions made in them); a deleted comment voids the comment or reply itself,
 * the replies and reactions to it and the mentions made in it (replies keep their own records, a
 * reply's deletion is its own event); a removed reaction voids that reaction. Pure.
 */
export function removalVoids(removal: Pick<Removal, 'kind' | 'id'>, action: ActionFields): boolean {
  switch (removal.kind) {
    case 'reaction':
      return (
        (action.verb === 'reaction' || action.verb === 'mentreact') && action.lastActionId === removal.id
      );
    case 'comment':
      if (action.verb === 'comment' || action.verb === 'mentreply')
        if (action.lastActionId === removal.id) return true;
      if (action.verb === 'mentreply' || action.verb === 'mentreact') return action.targetId === removal.id;
      return action.verb === 'mention' && action.mentionIn === 'comment' && action.targetId === removal.id;
    case 'post':
      return activityPost(action) === removal.id;
  }
}

/** Whether any of the removals voids the action. */
export function voidedByAny(removals: Iterable<Pick<Removal, 'kind' | 'id'>>, action: ActionFields): boolean {
  for (const removal of removals) if (removalVoids(removal, action)) return true;
  return false;
}
