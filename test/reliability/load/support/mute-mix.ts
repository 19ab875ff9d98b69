import type { Activity } from '../../../../tray-service/domain/activity.ts';
import { activityPost } from '../../../../tray-service/domain/activity-post.ts';
import type { MuteTarget } from '../../../../tray-service/domain/mute-changes.ts';
import { muteCovers } from '../../../../tray-service/domain/mute.ts';
import { eventOperations } from './inbox-model.ts';
import { random, type LoadEvent } from './load-sequence.ts';

/** One mutes call (PUT or DELETE v3/mutes) planned between two events of the sequence. */
export type MuteCall =
  | { kind: 'mute'; userId: string; target: MuteTarget; until: number | null }
  | { kind: 'unmute'; userId: string; target: MuteTarget };

export interface MutePlan {
  /** The calls made once the events before the index are sent and applied, before it is sent. */
  readonly calls: ReadonlyMap<number, readonly MuteCall[]>;
  /** The platform times of every action of the sequence, in order. */
  readonly actionTimes: readonly number[];
}

/** Whether an action of the sequence is dated from `from` to `to` (ms, both included). */
export function actionDatedBetween(plan: MutePlan, from: number, to: number): boolean {
  const times = plan.actionTimes;
  let [low, high] = [0, times.length];
  while (low < high) {
    const middle = (low + high) >> 1;
    if (times[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return low < times.length && times[low]! <= to;
}

/** The event's actions as the worker applies them: to one user, or a community's post. */
function actionsOf(event: LoadEvent): Activity[] {
  return eventOperations(event, 0).flatMap((operation) =>
    operation.kind === 'personal' ? operation.activities : operation.kind === 'posts' ? operation.posts : [],
  );
}

/** An action delivered to one user other than its actor: one a mute of theirs may hold back. */
const isPersonal = (action: Activity) =>
  action.audience.kind === 'user' && action.audience.userId !== action.actor.userId;

/** A target of the action its recipient could mute: its post, its actor, or its community. */
function targetOf(action: Activity, pick: number): MuteTarget {
  // A mention passes post and community mutes: only its actor's mute holds it back.
  const post = action.verb === 'mention' ? undefined : activityPost(action);
  if (pick < 0.3 && action.verb !== 'mention' && action.communityId)
    return { targetType: 'community', targetId: action.communityId };
  if (pick < 0.7 && post) return { targetType: 'post', targetId: post };
  return { targetType: 'user', targetId: action.actor.userId };
}

/**
 * Mutes and unmutes mixed into the whole sequence, one boundary every `every` events: at each, a
 * mute by the recipient of an action among the next `every` events (of its post, community or
 * actor; a third of them ending by themselves `every` ms after that action's time, so the span
 * ends inside the run), and at every other one, on average, the removal of a mute put earlier,
 * preferably one the coming events meet (their actions reach its owner again). Deterministic for a
 * seed. The calls are made between the events' sends, once the tray has applied everything sent
 * before (sustained-inbox-load.test.ts), so each one's place in the sequence is exact.
 */
export function planMutes(events: readonly LoadEvent[], every: number, seed: number): MutePlan {
  const next = random(seed);
  const all = events.map(actionsOf);
  const actions = all.map((list) => list.filter(isPersonal));

  const calls = new Map<number, MuteCall[]>();
  const put: { userId: string; target: MuteTarget }[] = [];
  for (let boundary = every; boundary < events.length - 1; boundary += every) {
    const coming = actions.slice(boundary, boundary + every).flat();
    const here: MuteCall[] = [];
    const earlier = put.slice();
    const action = coming[Math.floor(next() * coming.length)];
    if (action && action.audience.kind === 'user') {
      const target = targetOf(action, next());
      const until = next() < 1 / 3 ? action.at + every : null;
      here.push({ kind: 'mute', userId: action.audience.userId, target, until });
      put.push({ userId: action.audience.userId, target });
    }
    if (next() < 0.5 && earlier.length > 0) {
      const met = earlier.filter(({ userId, target }) =>
        coming.some(
          (one) => one.audience.kind === 'user' && one.audience.userId === userId && muteCovers(target, one),
        ),
      );
      const pool = met.length > 0 ? met : earlier;
      const chosen = pool[Math.floor(next() * pool.length)]!;
      put.splice(put.indexOf(chosen), 1);
      here.push({ kind: 'unmute', ...chosen });
    }
    if (here.length > 0) calls.set(boundary, here);
  }
  const actionTimes = all.flat().map((action) => action.at);
  return { calls, actionTimes: actionTimes.sort((a, b) => a - b) };
}
