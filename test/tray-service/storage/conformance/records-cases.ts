import { expect } from 'chai';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import { aComment, aMention, aReaction } from '../../../support/activity-builder.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { at, keysOf, NOW, T } from './case-fixtures.ts';
import { conformanceCase, type ConformanceContext } from './conformance-case.ts';

/**
 * The read side of a user's tray (TrayRecordsPort): pages, counts, read marks, delete-all and the
 * changes a reconnecting stream asks for. Records are written through the port's own writes.
 */

/** Five records of `owner`: reactions on posts 1..4 and a mention, two pairs sharing a lastUpdate. */
async function fiveRecords({ storage, id, write }: ConformanceContext, owner: string) {
  const actor = id('u-ben');
  const post = (n: number) => ({ postId: id(`p-${n}`), owner });
  await storage.writes.applyPersonal(
    [
      aReaction(actor, post(1), { id: id('r-1'), at: at(3) }),
      aReaction(actor, post(2), { id: id('r-2'), at: at(2) }),
      aReaction(actor, post(3), { id: id('r-3'), at: at(2) }),
      aMention(actor, owner, { in: 'post', postId: id('p-9') }, { at: at(1) }),
      aReaction(actor, post(4), { id: id('r-4'), at: at(1) }),
    ],
    write(NOW),
  );
  const key = (verb: string, targetId: string) => encodeRecordKey({ verb, targetId, userId: owner });
  return {
    r1: key('reaction', id('p-1')),
    r2: key('reaction', id('p-2')),
    r3: key('reaction', id('p-3')),
    mention: key('mention', id('p-9')),
    r4: key('reaction', id('p-4')),
  };
}

conformanceCase(
  'records: v3 pages are newest first, never split a group of equal lastUpdate, and end with nextPage 0',
  async (context) => {
    const owner = context.id('u-ana');
    const k = await fiveRecords(context, owner);
    const first = await context.storage.records.pageAfter(owner, undefined, 2, NOW);
    // Equal lastUpdate: by key, descending.
    expect(keysOf(first.records)).to.deep.equal([k.r1, ...[k.r2, k.r3].sort().reverse()]);
    expect(first.nextPage).to.equal(at(2));
    const second = await context.storage.records.pageAfter(owner, first.nextPage, 2, NOW);
    expect(keysOf(second.records)).to.deep.equal([k.r4, k.mention].sort().reverse());
    expect(second.nextPage).to.equal(0);
    expect((await context.storage.records.pageAfter(owner, 1, 10, NOW)).records).to.have.length(5);
    expect(await context.storage.records.pageAfter(owner, 0, 10, NOW)).to.deep.equal({
      records: [],
      nextPage: 0,
    });
    expect((await context.storage.records.pageAfter(owner, at(1), 10, NOW)).records).to.deep.equal([]);
  },
);

conformanceCase(
  'records: v2 pages number the same order, mentions excluded, and are empty past the end',
  async (context) => {
    const owner = context.id('u-ana');
    const k = await fiveRecords(context, owner);
    const page = (n: number) => context.storage.records.pageNumber(owner, n, 2, NOW, ['mention']);
    expect(keysOf(await page(1))).to.deep.equal([k.r1, ...[k.r2, k.r3].sort().reverse()].slice(0, 2));
    expect(keysOf([...(await page(1)), ...(await page(2))])).to.deep.equal([
      k.r1,
      ...[k.r2, k.r3].sort().reverse(),
      k.r4,
    ]);
    expect(await page(3)).to.deep.equal([]);
  },
);

conformanceCase(
  'records: count and countUnread see only unexpired records; a change at the last-read time is read',
  async (context) => {
    const owner = context.id('u-ana');
    await fiveRecords(context, owner);
    const { records } = context.storage;
    expect(await records.count(owner, NOW)).to.equal(5);
    expect(await records.count(owner, NOW, ['mention'])).to.equal(4);
    expect(await records.countUnread(owner, 0, NOW)).to.equal(5);
    expect(await records.countUnread(owner, NOW, NOW)).to.equal(0);
    expect(await records.countUnread(owner, NOW - 1, NOW)).to.equal(5);
    // Expiry is lastUpdate + retention: at(3) lives until exactly then, the others went before.
    const end = at(3) + RETENTION_DAYS * DAY_MS;
    expect(await records.count(owner, end - 1)).to.equal(1);
    expect(await records.countUnread(owner, 0, end - 1)).to.equal(1);
    expect(await records.count(owner, end)).to.equal(0);
    expect((await records.pageAfter(owner, undefined, 10, end)).records).to.deep.equal([]);
    expect(await records.pageNumber(owner, 1, 10, end, [])).to.deep.equal([]);
  },
);

conformanceCase(
  "records: countUnread 'recorded' counts after the user's recorded last-read time (0 before any)",
  async (context) => {
    const owner = context.id('u-ana');
    await fiveRecords(context, owner);
    const { records, lastRead } = context.storage;
    expect(await records.countUnread(owner, 'recorded', NOW)).to.equal(5);
    await lastRead.record(owner, NOW - 1);
    expect(await records.countUnread(owner, 'recorded', NOW)).to.equal(5);
    await lastRead.record(owner, NOW);
    expect(await records.countUnread(owner, 'recorded', NOW)).to.equal(0);
    expect(await records.countUnread(context.id('u-ben'), 'recorded', NOW)).to.equal(0);
  },
);

conformanceCase(
  'records: markRead marks only the caller’s record and is found only for an unexpired one',
  async (context) => {
    const { storage, id, write } = context;
    const ana = id('u-ana');
    const ben = id('u-ben');
    const post = id('p-1');
    // Two users with a record of the same verb and target.
    await storage.writes.applyPersonal(
      [
        aComment(id('u-cid'), { postId: post, owner: ana }, { id: id('cm-1'), at: T }),
        aMention(id('u-cid'), ben, { in: 'post', postId: post }, { at: T }),
        aComment(id('u-cid'), { postId: post, owner: ben }, { id: id('cm-2'), at: T }),
      ],
      write(NOW),
    );
    const marked = await storage.records.markRead(ana, 'comment', post, NOW + 5);
    expect(marked.found).to.equal(true);
    expect(marked.changed.map((record) => [record.key, record.hasRead])).to.deep.equal([
      [encodeRecordKey({ verb: 'comment', targetId: post, userId: ana }), true],
    ]);
    expect((await storage.records.pageAfter(ana, undefined, 10, NOW + 5)).records[0]?.hasRead).to.equal(true);
    expect(
      (await storage.records.pageNumber(ben, 1, 10, NOW + 5, [])).map((record) => record.hasRead),
    ).to.deep.equal([false, false]);
    expect(await storage.records.countUnread(ana, 0, NOW + 5)).to.equal(0);
    // Again: found, nothing changed.
    expect(await storage.records.markRead(ana, 'comment', post, NOW + 6)).to.deep.equal({
      found: true,
      changed: [],
    });
    expect((await storage.records.markRead(ana, 'reaction', post, NOW)).found).to.equal(false);
    expect((await storage.records.markRead(id('u-nobody'), 'comment', post, NOW)).found).to.equal(false);
    expect(
      (await storage.records.markRead(ben, 'comment', post, T + RETENTION_DAYS * DAY_MS)).found,
    ).to.equal(false);
  },
);

conformanceCase(
  'records: markAllRead marks every unread record of the user and returns those it changed',
  async (context) => {
    const owner = context.id('u-ana');
    const other = context.id('u-dee');
    const k = await fiveRecords(context, owner);
    await fiveRecords(context, other);
    await context.storage.records.markRead(owner, 'reaction', context.id('p-1'), NOW);
    const changed = await context.storage.records.markAllRead(owner, NOW + 1);
    expect(keysOf(changed).sort()).to.deep.equal([k.r2, k.r3, k.mention, k.r4].sort());
    expect(changed.every((record) => record.hasRead)).to.equal(true);
    expect(await context.storage.records.countUnread(owner, 0, NOW + 1)).to.equal(0);
    expect(await context.storage.records.countUnread(other, 0, NOW + 1)).to.equal(5);
    expect(await context.storage.records.markAllRead(owner, NOW + 2)).to.deep.equal([]);
  },
);

conformanceCase(
  'records: deleteAll removes the user’s whole tray only and says how many went',
  async (context) => {
    const owner = context.id('u-ana');
    const other = context.id('u-dee');
    await fiveRecords(context, owner);
    await fiveRecords(context, other);
    expect(await context.storage.records.deleteAll(owner)).to.equal(5);
    expect(await context.storage.records.count(owner, NOW)).to.equal(0);
    expect((await context.storage.records.pageAfter(owner, undefined, 10, NOW)).records).to.deep.equal([]);
    expect(await context.storage.records.count(other, NOW)).to.equal(5);
    expect(await context.storage.records.deleteAll(owner)).to.equal(0);
  },
);

conformanceCase(
  'records: changedSince returns unexpired records changed after `since`, oldest change first',
  async (context) => {
    const { storage, id, write } = context;
    const owner = id('u-ana');
    const post = (n: number) => ({ postId: id(`p-${n}`), owner });
    await storage.writes.applyPersonal(
      [aReaction(id('u-ben'), post(1), { id: id('r-1'), at: at(1) })],
      write(NOW),
    );
    await storage.writes.applyPersonal(
      [aReaction(id('u-ben'), post(2), { id: id('r-2'), at: at(2) })],
      write(NOW + 10),
    );
    await storage.writes.applyPersonal(
      [aReaction(id('u-ben'), post(3), { id: id('r-3'), at: at(0) })],
      write(NOW + 20),
    );
    const changed = await storage.records.changedSince(owner, NOW, NOW + 30);
    expect(changed.map((record) => [record.targetId, record.changedAt])).to.deep.equal([
      [id('p-2'), NOW + 10],
      [id('p-3'), NOW + 20],
    ]);
    // A read mark is a change too.
    await storage.records.markRead(owner, 'reaction', id('p-1'), NOW + 40);
    const afterRead = await storage.records.changedSince(owner, NOW + 20, NOW + 40);
    expect(afterRead.map((record) => [record.targetId, record.hasRead])).to.deep.equal([[id('p-1'), true]]);
    expect(await storage.records.changedSince(owner, 0, at(1) + RETENTION_DAYS * DAY_MS)).to.have.length(1);
  },
);

conformanceCase(
  'records: byKeys returns the user’s unexpired records of the keys, with their inbox state, and nothing of other users or unknown keys',
  async (context) => {
    const { storage, id } = context;
    const [owner, other] = [id('u-ana'), id('u-ola')];
    const keys = await fiveRecords(context, owner);
    await storage.writes.applyPersonal(
      [aReaction(id('u-ben'), { postId: id('p-ola'), owner: other }, { id: id('r-ola'), at: at(1) })],
      context.write(NOW),
    );
    const theirs = encodeRecordKey({ verb: 'reaction', targetId: id('p-ola'), userId: other });
    expect(await storage.records.byKeys(other, [theirs], NOW)).to.have.length(1);
    await storage.records.markRead(owner, 'reaction', id('p-2'), NOW + 10);
    const wanted = [keys.r1, keys.r2, keys.r2, theirs, `${keys.r1}-unknown`, keys.mention];
    const found = await storage.records.byKeys(owner, wanted, NOW + 20);
    const all = await storage.records.changedSince(owner, -1, NOW + 20);
    const asChanged = (key: string) => all.find((record) => record.key === key);
    expect(found.map((record) => record.key).sort()).to.deep.equal([keys.r1, keys.r2, keys.mention].sort());
    // Each as a reconnecting stream reads it: the same fields, inbox state and change time.
    for (const record of found) expect(record).to.deep.equal(asChanged(record.key));
    expect(found.find((record) => record.key === keys.r2)?.hasRead).to.equal(true);
    expect(await storage.records.byKeys(owner, [], NOW + 20)).to.deep.equal([]);
    // Many keys at once (an adapter may read them otherwise than a few): the same answer.
    const many = [
      ...Object.values(keys),
      theirs,
      ...Array.from({ length: 8 }, (_, n) => `${keys.r1}-unknown-${n}`),
    ];
    expect(
      (await storage.records.byKeys(owner, many, NOW + 20)).map((record) => record.key).sort(),
    ).to.deep.equal(Object.values(keys).sort());
    // Expired: the reaction on post 1 lived RETENTION_DAYS after its lastUpdate.
    expect(
      (await storage.records.byKeys(owner, [keys.r1, keys.r4], at(2) + RETENTION_DAYS * DAY_MS)).map(
        (record) => record.key,
      ),
    ).to.deep.equal([keys.r1]);
  },
);

conformanceCase(
  'records: changedSince pages through ties of changedAt by key, each record exactly once',
  async (context) => {
    const { storage, id } = context;
    const owner = id('u-ana');
    // Five records changed at NOW (one write), two at NOW + 10.
    await fiveRecords(context, owner);
    await storage.records.markRead(owner, 'reaction', id('p-1'), NOW + 10);
    await storage.records.markRead(owner, 'mention', id('p-9'), NOW + 10);
    const all = await storage.records.changedSince(owner, NOW - 1, NOW + 20);
    expect(all.map((record) => record.changedAt)).to.deep.equal([NOW, NOW, NOW, NOW + 10, NOW + 10]);
    const paged: string[] = [];
    let after: { changedAt: number; key: string } | undefined;
    for (;;) {
      const page = await storage.records.changedSince(owner, NOW - 1, NOW + 20, {
        limit: 2,
        ...(after ? { after } : {}),
      });
      expect(page.length).to.be.at.most(2);
      if (page.length === 0) break;
      paged.push(...page.map((record) => record.key));
      const last = page[page.length - 1];
      if (last) after = { changedAt: last.changedAt, key: last.key };
    }
    expect(paged).to.deep.equal(all.map((record) => record.key));
    // Within a tie, by key.
    const tied = all.filter((record) => record.changedAt === NOW).map((record) => record.key);
    expect(tied).to.deep.equal([...tied].sort());
  },
);
