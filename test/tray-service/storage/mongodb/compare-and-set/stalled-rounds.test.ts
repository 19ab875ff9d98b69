import { expect } from 'chai';
import {
  STALLED_ROUNDS,
  StalledRounds,
} from '../../../../../tray-service/storage/mongodb/compare-and-set/stalled-rounds.ts';

describe('StalledRounds', () => {
  /** A policy whose waits are recorded (the round each was told) and return at once. */
  function recorded(what: string): { rounds: StalledRounds; waits: number[] } {
    const waits: number[] = [];
    const rounds = new StalledRounds(what, {
      backOff: (round) => {
        waits.push(round);
        return Promise.resolve();
      },
    });
    return { rounds, waits };
  }

  it('gives up after 60 rounds in a row without progress, naming the records, backing off longer each round', async () => {
    const { rounds, waits } = recorded('tray record post_c-hike_u-ana');
    for (let round = 1; round < STALLED_ROUNDS; round++) {
      await rounds.wait();
      rounds.count(false);
    }
    await rounds.wait();
    expect(() => rounds.count(false)).to.throw(
      'tray record post_c-hike_u-ana still contended after 60 rounds without progress',
    );
    expect(STALLED_ROUNDS).to.equal(60);
    expect(waits).to.deep.equal(Array.from({ length: 60 }, (_, index) => index + 1));
  });

  it('never gives up while something moves each round, and starts its back-off short again after progress', async () => {
    const { rounds, waits } = recorded('records of comment:p-1');
    for (let round = 1; round <= 3 * STALLED_ROUNDS; round++) {
      await rounds.wait();
      rounds.count(round % 10 === 0);
    }
    expect(waits.slice(0, 12)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2]);
    expect(Math.max(...waits)).to.equal(10);
  });
});
