import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobScope } from '../../../../shared/async/job-scope.ts';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import { ReferenceTray, type TrayOperation } from '../../../support/reference-tray/reference-tray.ts';
import { aComment, aCommentReaction, aMention, aReply } from '../../../support/activity-builder.ts';
import { applyOperation, RETENTION_DAYS } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';
import { differences, modelSnapshot, storageSnapshot } from './tray-snapshot.ts';

/**
 * A removal racing the deliveries it voids: whatever runs first, the trays end as if the removal
 * came last (docs/tray-rules.md#inbox). Each round is its own post, so the rounds try many
 * interleavings: the removal starts first, second, in the middle or last, every write starts
 * after a delay of its own (0 to 4 ms, varying by round), as jobs taken up by a busy worker do, and
 * the jobs alternate between two tray processes.
 */

/** Rounds, each a post of its own: enough that an adapter giving up under contention fails. */
const ROUNDS = 24;
/** Actors replying to the deleted comment, reacting to it and commenting on its post, a third each. */
const OTHERS = 12;

/** Where the removal starts among the deliveries, and each write's start delay, by round. */
function schedule(round: number, writes: number): { removalAt: number; delays: number[] } {
  const positions = [0, 1, Math.floor(writes / 2), writes];
  return {
    removalAt: positions[round % positions.length] ?? 0,
    delays: Array.from({ length: writes + 1 }, (_, n) => (n * 7 + round * 3) % 5),
  };
}

conformanceCase(
  'removals: a comment deleted while its post, replies, reactions and mentions arrive at once leaves every record as if the deletion came last, in every interleaving tried',
  async (context) => {
    const { id } = context;
    const [ana, ben, fay] = ['u-ana', 'u-ben', 'u-fay'].map(id) as [string, string, string];
    const others = Array.from({ length: OTHERS }, (_, n) => id(`u-${n}`));
    // The order the model applies: every delivery, then the removal.
    const model = new ReferenceTray({ retentionDays: RETENTION_DAYS });
    const failures: string[] = [];
    // Two tray processes share the jobs: one process's own writes to a record queue up in it.
    const storages = [context.storage, await context.peer()];
    for (let round = 0; round < ROUNDS; round++) {
      const postId = id(`p-race-${round}`);
      const post = { postId, owner: ana };
      const deleted = { commentId: id(`cm-${round}-ben`), owner: ben, postId };
      const deliveries: TrayOperation[] = [
        aComment(ben, post, { id: deleted.commentId, at: at(1) }),
        aMention(ben, fay, { in: 'comment', commentId: deleted.commentId, postId }, { at: at(1) }),
        ...others.map((actor, n): Activity => {
          const action = { id: id(`a-${round}-${n}`), at: at(2 + n) };
          return n % 3 === 0
            ? aReply(actor, deleted, action)
            : n % 3 === 1
              ? aCommentReaction(actor, deleted, action)
              : aComment(actor, post, action);
        }),
      ].map((activity): TrayOperation => ({ kind: 'personal', activities: [activity], now: NOW }));
      const removal: TrayOperation = {
        kind: 'removal',
        removals: [{ kind: 'comment', id: deleted.commentId, postId, at: at(3 + OTHERS) }],
        now: NOW,
      };
      for (const operation of [...deliveries, removal]) model.apply(operation);

      const { removalAt, delays } = schedule(round, deliveries.length);
      const operations = [...deliveries];
      operations.splice(removalAt, 0, removal);
      // Each its own job, as the worker runs them (its claims are the job's: claim owners). A failed
      // round is noted and the next one runs all the same: the failure says how many rounds failed.
      const failed = await Promise.allSettled(
        operations.map((operation, n) =>
          jobScope.run(id(`job-${round}-${n}`), async () => {
            await sleep(delays[n] ?? 0);
            await applyOperation(storages[(n + round) % 2] ?? context.storage, operation, (now) =>
              context.write(now),
            );
          }),
        ),
      );
      const rejected = failed.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
      if (rejected.length > 0)
        failures.push(`round ${round}: ${rejected.length} jobs failed: ${String(rejected[0])}`);

      // The newest three commenters: every third actor, newest first.
      const expectedActors = others
        .filter((_, n) => n % 3 === 2)
        .reverse()
        .slice(0, 3);
      const comments = (await context.storage.records.pageAfter(ana, undefined, 100, NOW)).records.find(
        (record) => record.verb === 'comment' && record.targetId === postId,
      );
      const counted = { actorsCount: comments?.actorsCount, lastActionId: comments?.lastActionId };
      const actors = comments?.actors.map((actor) => actor.userId);
      if (
        counted.actorsCount !== OTHERS / 3 ||
        counted.lastActionId !== id(`a-${round}-${OTHERS - 1}`) ||
        JSON.stringify(actors) !== JSON.stringify(expectedActors)
      )
        failures.push(`round ${round}: Ana's comments record ${JSON.stringify({ ...counted, actors })}`);
    }
    expect(
      failures,
      `failed in ${new Set(failures.map((failure) => failure.split(':')[0])).size} of ${ROUNDS} rounds`,
    ).to.deep.equal([]);
    // Ben's replies and reactions records and Fay's mention all went with the comment.
    for (const user of [ana, ben, fay]) {
      const found = differences(
        await storageSnapshot(context.storage, user, NOW, 0),
        modelSnapshot(model, user, NOW, 0),
      );
      if (found.length > 0) expect.fail(`${user}'s tray differs from the model:\n${found.join('\n')}`);
    }
    expect((await context.storage.records.pageAfter(ben, undefined, 100, NOW)).records).to.deep.equal([]);
    expect((await context.storage.records.pageAfter(fay, undefined, 100, NOW)).records).to.deep.equal([]);
  },
  { needs: 'removals', timeout: 300_000, ownDatabase: true },
);
