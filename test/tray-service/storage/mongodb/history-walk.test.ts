import { expect } from 'chai';
import fc from 'fast-check';
import type { GroupCount } from '../../../../tray-service/storage/mongodb/create-counter.ts';
import { completeAbove, nextRound } from '../../../../tray-service/storage/mongodb/history-walk.ts';

const bucket = (count: number, newest: number): GroupCount => ({ key: `b${newest}`, count, newest });

describe('history walk (which buckets a page reads)', () => {
  const buckets = [bucket(5, 900), bucket(1, 800), bucket(30, 700), bucket(2, 600)];

  describe('nextRound', () => {
    it('takes buckets until their counts cover what the page wants', () => {
      expect(nextRound(buckets, 0, 0, 6, 16)).to.equal(2);
      expect(nextRound(buckets, 0, 0, 7, 16)).to.equal(3);
      expect(nextRound(buckets, 0, 0, 5, 16)).to.equal(1);
    });
    it('counts the rows already read, and takes at least one bucket even when they cover it', () => {
      expect(nextRound(buckets, 2, 6, 21, 16)).to.equal(3);
      expect(nextRound(buckets, 1, 40, 21, 16)).to.equal(2);
    });
    it('takes at most `max` buckets a round, and none past the end', () => {
      expect(nextRound(buckets, 0, 0, 1_000, 2)).to.equal(2);
      expect(nextRound(buckets, 0, 0, 1_000, 16)).to.equal(4);
      expect(nextRound(buckets, 4, 38, 1_000, 16)).to.equal(4);
    });
  });

  describe('completeAbove', () => {
    it('is the newest record of any bucket not read yet', () => {
      expect(completeAbove(buckets, 0)).to.equal(900);
      expect(completeAbove(buckets, 2)).to.equal(700);
      expect(completeAbove([bucket(1, 500), bucket(1, 300), bucket(1, 400)], 1)).to.equal(400);
    });
    it('is -Infinity once every bucket is read', () => {
      expect(completeAbove(buckets, 4)).to.equal(-Infinity);
      expect(completeAbove([], 0)).to.equal(-Infinity);
    });
  });

  it('reading rounds until done visits every bucket once, in order; a round stops short only when it covers the page', () => {
    const sizes = fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 60 });
    fc.assert(
      fc.property(
        sizes,
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 16 }),
        (counts, want, max) => {
          const list = counts.map((count, i) => bucket(count, 10_000 - i));
          const visited: number[] = [];
          for (let start = 0, have = 0; start < list.length;) {
            const end = nextRound(list, start, have, want, max);
            expect(end).to.be.above(start);
            expect(end - start).to.be.at.most(max);
            for (let i = start; i < end; i += 1) {
              visited.push(i);
              have += list[i]!.count;
            }
            // Fewer than `max` buckets and not the last of them: only because the page is covered.
            if (end - start < max && end < list.length) expect(have).to.be.at.least(want);
            start = end;
          }
          expect(visited).to.deep.equal(list.map((_, i) => i));
        },
      ),
    );
  });
});
