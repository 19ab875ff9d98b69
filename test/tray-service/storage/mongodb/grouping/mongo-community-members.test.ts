import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import {
  MEMBERSHIPS,
  TRAY_MUTES,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { createMongoCommunityMembers } from '../../../../../tray-service/storage/mongodb/grouping/mongo-community-members.ts';
import {
  membershipId,
  type MembershipDoc,
} from '../../../../../tray-service/storage/mongodb/collections/memberships-collection.ts';
import {
  muteTargetKey,
  type MuteDoc,
} from '../../../../../tray-service/storage/mongodb/collections/tray-mutes-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import type { MuteTargetType } from '../../../../../tray-service/domain/mute.ts';
import { aPost } from '../../../../support/activity-builder.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';

const userOf = (n: number) => `u-${String(n).padStart(5, '0')}`;
const FAR = new Date(Date.UTC(2100, 0, 1));

function muteDoc(n: number, targetType: MuteTargetType, targetId: string, until: number | null): MuteDoc {
  const userId = userOf(n);
  return {
    _id: JSON.stringify([userId, targetType, targetId, 1_000]),
    userId,
    targetType,
    targetId,
    createdAt: 1_000,
    until,
    removedAt: null,
    target: muteTargetKey(targetType, targetId),
    expiresAt: FAR,
  };
}

// Counted with the driver's command monitoring: a post's recipients in a community of 10,000
// members of whom 1,100 mute it are read in a few commands (the members, then one `$in` of the
// spans on the post's targets), never one per member.
describe('MongoDB adapter: a community post’s recipients with mutes, in a few commands', function () {
  this.timeout(120_000);
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;
  const commands: string[] = [];
  const post = aPost(userOf(0), { id: 'p-big', at: 5_000, communityId: 'c-big' });

  before(async () => {
    client = new MongoClient(testStack().mongoUri, { monitorCommands: true });
    client.on('commandStarted', (event) => commands.push(event.commandName));
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, trayCollections);
    const members: MembershipDoc[] = Array.from({ length: 10_000 }, (_, n) => ({
      _id: membershipId('c-big', userOf(n)),
      communityId: 'c-big',
      userId: userOf(n),
      active: true,
      since: 0,
      updatedAt: 0,
    }));
    await db.collection<MembershipDoc>(MEMBERSHIPS).insertMany(members);
    // Every tenth mutes the community; every hundredth (+1) did only until t=2,000, every
    // hundredth (+2) mutes the post's author.
    const mutes = [
      ...Array.from({ length: 1_000 }, (_, i) => muteDoc(i * 10, 'community', 'c-big', null)),
      ...Array.from({ length: 100 }, (_, i) => muteDoc(i * 100 + 1, 'community', 'c-big', 2_000)),
      ...Array.from({ length: 100 }, (_, i) => muteDoc(i * 100 + 2, 'user', userOf(0), null)),
    ];
    await db.collection<MuteDoc>(TRAY_MUTES).insertMany(mutes);
  });
  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
  });

  // Each read: the post's kept place, the community's membership changes and imported members, the
  // deleted among the members (an `$in` per 1,000, as a fan-out's batches read them), the spans on
  // the post's targets, and the further batches of those cursors (getMore), whatever the number
  // muting.
  /** The count looks up the 10,000 members but the author: an `$in` of the deleted per 1,000. */
  const DELETED_READS = 10;
  it('counts and pages them exactly, each read in a few commands', async () => {
    const members = createMongoCommunityMembers(db!);
    const expected = Array.from({ length: 10_000 }, (_, n) => n)
      .filter((n) => n % 10 !== 0 && n % 100 !== 2)
      .map(userOf);
    commands.length = 0;
    expect(await members.countPostRecipients('c-big', post)).to.equal(expected.length);
    const counted = [...commands];
    expect(counted, counted.join(',')).to.have.length.at.most(9 + DELETED_READS);
    expect(counted.filter((command) => command === 'find').length).to.be.above(DELETED_READS - 1);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    commands.length = 0;
    for (let guard = 0; guard < 20; guard++) {
      const page = await members.postRecipients('c-big', post, {
        limit: 5_000,
        ...(after === undefined ? {} : { after }),
      });
      pages++;
      seen.push(...page.userIds);
      if (page.next === undefined) break;
      after = page.next;
    }
    expect(seen).to.deep.equal(expected);
    expect(pages).to.equal(2);
    // A page looks up only its own 5,001 candidates' profiles: an `$in` per 1,000.
    expect(commands.length, commands.join(',')).to.be.at.most((9 + 6) * pages);
  });
});
