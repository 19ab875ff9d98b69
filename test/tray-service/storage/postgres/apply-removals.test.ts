import { expect } from 'chai';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import type { Removal } from '../../../../tray-service/domain/removal.ts';
import { aComment, aCommentReaction, aMention, aReply } from '../../../support/activity-builder.ts';
import { at, NOW, useTray } from './tray-fixture.ts';

describe('storage/postgres applyRemovals', () => {
  const tray = useTray();

  // A comment's removal reads and locks only the actions it may void: the locks of their groups and
  // of the post must still order it against deliveries of those very actions, whichever commits first.
  describe('a comment deleted while its post, replies, reactions and mentions arrive at once', () => {
    it('leaves every record as if the deletion came last, in every interleaving tried', async () => {
      const [ana, ben, fay] = ['u-ana', 'u-ben', 'u-fay'];
      const others = ['u-0', 'u-1', 'u-2', 'u-3', 'u-4', 'u-5'];
      for (const round of [0, 1, 2, 3, 4]) {
        const postId = `p-race-${round}`;
        const post = { postId, owner: ana };
        const deleted = { commentId: `cm-${round}-ben`, owner: ben, postId };
        const removal: Removal = { kind: 'comment', id: deleted.commentId, postId, at: at(9) };
        const deliveries: Activity[] = [
          aComment(ben, post, { id: deleted.commentId, at: at(1) }),
          aMention(ben, fay, { in: 'comment', commentId: deleted.commentId, postId }, { at: at(1) }),
          ...others.map((actor, n) =>
            n % 3 === 0
              ? aReply(actor, deleted, { id: `cm-${round}-r${n}`, at: at(2 + n) })
              : n % 3 === 1
                ? aCommentReaction(actor, deleted, { id: `re-${round}-${n}`, at: at(2 + n) })
                : aComment(actor, post, { id: `cm-${round}-${n}`, at: at(2 + n) }),
          ),
        ];
        // The removal starts first, second or last among the deliveries.
        const writes = deliveries.map(
          (activity) => () => tray.writes.applyPersonal([activity], tray.context()),
        );
        const remove = () => tray.writes.applyRemovals?.([removal], tray.context()) ?? Promise.resolve();
        writes.splice(round % 3 === 0 ? 0 : round % 3 === 1 ? 1 : writes.length, 0, remove);
        await Promise.all(writes.map((write) => write()));

        const comments = await tray.record(ana, 'comment', postId);
        expect(comments, `round ${round}`).to.deep.include({ actorsCount: 2, lastActionId: `cm-${round}-5` });
        expect(comments?.actors.map((actor) => actor.userId)).to.deep.equal(['u-5', 'u-2']);
      }
      // Ben's replies and reactions records and Fay's mention all went with the comment.
      expect(await tray.records.pageNumber(ben, 1, 100, NOW, [])).to.deep.equal([]);
      expect(await tray.records.pageNumber(fay, 1, 100, NOW, [])).to.deep.equal([]);
    });
  });
});
