import { expect } from 'chai';
import { NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/** The last-read and delete-all times (LatestTimesPort): one per user, never moving backwards. */
for (const part of ['lastRead', 'clears'] as const) {
  conformanceCase(
    `latest times (${part}): 0 until recorded, then the largest time recorded, per user`,
    async ({ storage, id }) => {
      const times = storage[part];
      const ana = id('u-ana');
      expect(await times.latest(ana)).to.equal(0);
      await times.record(ana, NOW);
      await times.record(ana, NOW - 10);
      expect(await times.latest(ana)).to.equal(NOW);
      await times.record(ana, NOW + 10);
      expect(await times.latest(ana)).to.equal(NOW + 10);
      expect(await times.latest(id('u-ben'))).to.equal(0);
    },
  );

  conformanceCase(`latest times (${part}): concurrent records keep the largest`, async ({ storage, id }) => {
    const times = storage[part];
    const ana = id('u-ana');
    const offsets = [5, 1, 8, 3, 7, 2, 6, 4];
    await Promise.all(offsets.map((offset) => times.record(ana, NOW + offset)));
    expect(await times.latest(ana)).to.equal(NOW + 8);
  });
}
