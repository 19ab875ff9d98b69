import type { Activity } from '../../tray-service/domain/activity.ts';

/** A post of `author` into the timing scripts' community `c-big`, as the event mapping makes it. */
export function bigClubPost(author: string, at: number, id: string): Activity {
  return {
    verb: 'post',
    targetId: 'c-big',
    targetType: 'community',
    targetName: 'Big Club',
    lastActionId: id,
    feed: { kind: 'community', id: 'c-big', name: 'Big Club' },
    communityId: 'c-big',
    actor: { userId: author, name: `Member ${author}`, imageUrl: `https://img.example/${author}.png` },
    at,
    audience: { kind: 'community', communityId: 'c-big' },
  };
}
