import { expect } from 'chai';
import { inShrinkingBatches } from '../../../../tray-service/storage/postgres/shrinking-batches.ts';

/** PostgreSQL's answer to a statement past statement_timeout. */
const timedOut = () =>
  Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });

/**
 * A table of `rows` expired rows, oldest first, whose first `slow` rows are slow: a batch holding
 * more than ten of them outlasts the statement timeout. Counts the batches run and timed out.
 */
function expiring(rows: number, slow: number) {
  let next = 0;
  const counts = { batches: 0, timeouts: 0 };
  const runBatch = async (size: number) => {
    counts.batches += 1;
    const slowIn = Math.max(0, Math.min(next + size, slow) - next);
    if (slowIn > 10) {
      counts.timeouts += 1;
      throw timedOut();
    }
    const read = Math.min(size, rows - next);
    next += read;
    return { read, gone: read };
  };
  return { runBatch, counts };
}

describe('storage/postgres inShrinkingBatches', () => {
  it('purges every row past a few slow ones, back at full batches soon after', async () => {
    const { runBatch, counts } = expiring(30_000, 30);
    expect(await inShrinkingBatches(1_000, runBatch)).to.equal(30_000);
    // 1,000 and 100 time out, 10 pass ten times, then 100 ten times, then 1,000s.
    expect(counts.timeouts).to.equal(2);
    expect(counts.batches).to.be.below(60);
  });

  // Each grown batch that times out again costs a whole statement timeout (10 s by default): in a
  // long run of slow rows, growing back after every ten small batches spent one per hundred rows.
  it('grows more rarely in a long run of slow rows, and still grows back after it', async () => {
    const { runBatch, counts } = expiring(40_000, 10_000);
    expect(await inShrinkingBatches(1_000, runBatch)).to.equal(40_000);
    // Ten a batch through the slow rows: 1,000 batches. Growing after 10, 20, 40, 80, then 100
    // passed batches: about a dozen timeouts, not a hundred.
    expect(counts.timeouts).to.be.within(3, 15);
    expect(counts.batches).to.be.below(1_000 + 15 + 400);
  });

  it('still fails on a timeout at one row, and on any other error at once', async () => {
    await expect(inShrinkingBatches(1_000, () => Promise.reject(timedOut()))).to.be.rejectedWith(
      /statement timeout/,
    );
    let runs = 0;
    await expect(
      inShrinkingBatches(1_000, () => ((runs += 1), Promise.reject(new Error('permission denied')))),
    ).to.be.rejectedWith(/permission denied/);
    expect(runs).to.equal(1);
  });
});
