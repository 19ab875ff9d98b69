import { expect } from 'chai';
import { MAX_TARGET_ID_LENGTH, MAX_USER_ID_LENGTH } from '../../../../tray-service/domain/id-limits.ts';
import { MAX_MUTES_IN_FORCE, muteTargetTypes } from '../../../../tray-service/domain/mute.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';
import { inboxOf } from './inbox-operation.ts';

/**
 * `start` made `length` characters long with characters of three bytes of UTF-8 each (CJK), the
 * most room a character takes in an index; `from` sets them apart between ids.
 */
const widest = (start: string, length: number, from = 0x4e00) =>
  start + Array.from({ length: length - start.length }, (_, i) => String.fromCharCode(from + i)).join('');

/**
 * Every write that stores an id a caller names takes the longest the API lets through
 * (tray-service/domain/id-limits.ts): an index entry over the engine's limit would fail the call
 * with a 500 on every attempt. A mute's target id is tried with the widest characters and with a
 * control character, which a JSON key (the MongoDB adapter's span ids) writes as six.
 */
conformanceCase(
  'id limits: the longest user and target ids the API takes are stored by every write',
  async ({ storage, id }) => {
    const user = widest(id('u-long'), MAX_USER_ID_LENGTH);
    await storage.lastRead.record(user, NOW);
    expect(await storage.lastRead.latest(user)).to.equal(NOW);
    await storage.clears.record(user, NOW);
    expect(await storage.clears.latest(user)).to.equal(NOW);

    // The block list's owner is `<NETWORK_ID>_<user id>`, NETWORK_ID up to 63 characters.
    const owner = `${'n'.repeat(63)}_${user}`;
    const blocked = widest(id('u-blocked'), MAX_USER_ID_LENGTH, 0x5e00);
    await storage.blockList.block(owner, blocked);
    expect([...(await storage.blockList.blockedAmong(owner, [blocked]))]).to.deep.equal([blocked]);

    const inbox = inboxOf(storage);
    const targets = [
      widest(id('t-wide'), MAX_TARGET_ID_LENGTH, 0x6e00),
      `${id('t-escaped')}${'\u0001'.repeat(MAX_TARGET_ID_LENGTH - id('t-escaped').length)}`,
    ];
    for (const targetType of muteTargetTypes) {
      for (const targetId of targets) {
        const target = { targetType, targetId };
        const put = await inbox.putMute(user, target, null, NOW, RETENTION_DAYS, MAX_MUTES_IN_FORCE);
        expect(put).to.include(target);
        expect(await inbox.removeMute(user, target, NOW + 1, RETENTION_DAYS)).to.equal(true);
      }
    }
    expect(await inbox.mutesInForce(user, NOW + 1)).to.deep.equal([]);
  },
  { needs: 'inbox' },
);
