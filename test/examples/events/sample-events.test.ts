import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { repoRoot } from '../../support/run-script.ts';

/** A sample as sign-and-send reads it, mapped as the tray's worker maps a queued event. */
function mapped(file: string) {
  const envelope = JSON.parse(readFileSync(join(repoRoot, 'examples', 'events', file), 'utf8')) as {
    event: string;
    data: Record<string, unknown>;
  };
  return mapEvent({ ...envelope, receivedAt: Date.now() });
}

// The samples the quick start sends (`npm run sign-and-send -- --now examples/events/comment.json`): valid
// events of docs/contract.md, each telling a user the docs name.
describe('the sample events (examples/events)', () => {
  it('comment.json: Cid comments on Ana’s post, a comment record for u-ana', () => {
    const { status, error, activities } = mapped('comment.json');
    expect(status, error).to.equal('applied');
    expect(activities.map(({ verb, targetId, audience }) => ({ verb, targetId, audience }))).to.deep.equal([
      { verb: 'comment', targetId: 'p-100', audience: { kind: 'user', userId: 'u-ana' } },
    ]);
  });

  it('post.json: Ana posts in Hiking Club mentioning Ben, a post for its members and a mention for u-ben', () => {
    const { status, error, activities } = mapped('post.json');
    expect(status, error).to.equal('applied');
    expect(activities.map(({ verb, audience }) => ({ verb, audience }))).to.deep.include.members([
      { verb: 'post', audience: { kind: 'community', communityId: 'c-hike' } },
      { verb: 'mention', audience: { kind: 'user', userId: 'u-ben' } },
    ]);
  });
});
