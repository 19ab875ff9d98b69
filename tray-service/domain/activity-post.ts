import type { Activity } from './activity.ts';

/**
 * The post an activity belongs to (docs/contract.md#record-fields-per-verb): the post itself for a
 * `post`, the record's target for a comment or reaction on a post and a mention in a post, the
 * parent target for a reply, a reaction on a comment and a mention in a comment. What a deleted
 * post voids and what a `post` mute covers. Pure.
 */
export function activityPost(
  activity: Pick<Activity, 'verb' | 'targetId' | 'parentTargetId' | 'lastActionId' | 'mentionIn'>,
): string | undefined {
  switch (activity.verb) {
    case 'post':
      return activity.lastActionId;
    case 'comment':
    case 'reaction':
      return activity.targetId;
    case 'mentreply':
    case 'mentreact':
      return activity.parentTargetId;
    case 'mention':
      return activity.mentionIn === 'comment' ? activity.parentTargetId : activity.targetId;
  }
}
