import { expect } from 'chai';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { aComment } from '../../../support/activity-builder.ts';
import { RETENTION_DAYS } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/**
 * purgeExpired: expired records and events go, the rest stays (readers skip expired ones before).
 * An adapter may purge by whole UTC days, so what expired a day before `now` must be gone.
 */
conformanceCase(
  'purge: deletes records and events expired a day before, keeps the live ones, says how many went',
  async (context) => {
    const storage = await context.isolated();
    const { id, write } = context;
    const ana = id('u-ana');
    const day = (n: number) => at(0) + n * DAY_MS;
    await storage.writes.applyPersonal(
      [0, 1, 4].map((n) =>
        aComment(id('u-ben'), { postId: id(`p-${n}`), owner: ana }, { id: id(`cm-${n}`), at: day(n) }),
      ),
      write(NOW + 4 * DAY_MS),
    );
    const now = new Date(day(2) + RETENTION_DAYS * DAY_MS + 1);
    for (const [key, receivedAt, retentionDays] of [
      [id('old'), new Date(now.getTime() - 3 * DAY_MS), 1],
      [id('new'), new Date(now.getTime() - DAY_MS), 7],
    ] as const) {
      await storage.events.store(
        { key, event: 'post.didCreate', data: {}, webhook: id('wh'), receivedAt },
        { status: 'applied' },
        { retentionDays, now: receivedAt },
      );
    }
    const purged = await storage.purgeExpired(now);
    expect(purged.records).to.equal(2);
    expect(purged.events).to.equal(1);
    expect(
      (await storage.records.pageAfter(ana, undefined, 10, day(4))).records.map((record) => record.targetId),
    ).to.deep.equal([id('p-4')]);
    expect(await storage.events.get(id('new'))).to.not.equal(undefined);
    expect(await storage.purgeExpired(now)).to.deep.equal({ records: 0, events: 0 });
  },
);
