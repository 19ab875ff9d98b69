import { expect } from 'chai';
import { keyedBatches, type RunBatch } from '../../../shared/async/keyed-batches.ts';

const tick = () => new Promise((done) => setImmediate(done));

/** Batch runners the test completes by hand, recording each batch with the runner that ran it. */
function manualRuns() {
  const batches: { runner: string; items: number[] }[] = [];
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const runner =
    (name: string): RunBatch<number> =>
    (items) => {
      batches.push({ runner: name, items: [...items] });
      return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
    };
  const settle = async (index: number, error?: Error) => {
    const run = pending[index];
    if (!run) throw new Error(`no batch #${index}`);
    if (error) run.reject(error);
    else run.resolve();
    await tick();
  };
  return { batches, runner, settle };
}

describe('keyedBatches', () => {
  it('runs a lone call at once, and the calls of its key made meanwhile together next, with the first one’s runner', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 10 });
    const done: number[] = [];
    const call = (n: number, name: string) => submit('k', n, runner(name)).then(() => done.push(n));
    void call(1, 'a');
    await tick();
    expect(batches).to.deep.equal([{ runner: 'a', items: [1] }]);
    void call(2, 'b');
    void call(3, 'c');
    await tick();
    expect(batches, 'nothing more while the first batch runs').to.have.length(1);
    await settle(0);
    expect(done).to.deep.equal([1]);
    expect(batches[1]).to.deep.equal({ runner: 'b', items: [2, 3] });
    await settle(1);
    expect(done).to.deep.equal([1, 2, 3]);
  });

  it('puts calls of the same tick in one batch', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 10 });
    const calls = [submit('k', 1, runner('a')), submit('k', 2, runner('b'))];
    await tick();
    expect(batches).to.deep.equal([{ runner: 'a', items: [1, 2] }]);
    await settle(0);
    await Promise.all(calls);
  });

  it('runs different keys independently, at the same time', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 10 });
    const calls = [submit('x', 1, runner('x')), submit('y', 2, runner('y'))];
    await tick();
    expect(batches.map((batch) => batch.runner).sort()).to.deep.equal(['x', 'y']);
    await settle(0);
    await settle(1);
    await Promise.all(calls);
  });

  it('splits waiting calls into batches of maxBatch', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 2 });
    const calls = [1, 2, 3, 4, 5].map((n) => submit('k', n, runner(`r${n}`)));
    await tick();
    expect(batches).to.deep.equal([{ runner: 'r1', items: [1, 2] }]);
    await settle(0);
    await settle(1);
    await settle(2);
    expect(batches.map((batch) => batch.items)).to.deep.equal([[1, 2], [3, 4], [5]]);
    await Promise.all(calls);
  });

  // One poison item (a post whose fan-out cannot succeed) must not fail the items gathered with it,
  // on every retry of theirs: a failed batch of several runs again item by item, each with its own
  // call's runner, before the key's next batch.
  it('runs a failed batch of several again call by call, so only the failing call fails; the key then runs again', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 10 });
    const outcome = (n: number) =>
      submit('k', n, runner(`r${n}`)).then(
        () => 'ok',
        (error: Error) => error.message,
      );
    const first = outcome(1);
    await tick();
    const second = [outcome(2), outcome(3)];
    await tick();
    await settle(0);
    expect(batches[1]).to.deep.equal({ runner: 'r2', items: [2, 3] });
    const waiting = outcome(4);
    await settle(1, new Error('boom'));
    expect(batches.slice(2), 'each call of the failed batch alone, in order').to.deep.equal([
      { runner: 'r2', items: [2] },
    ]);
    await settle(2, new Error('poison'));
    expect(batches.slice(3)).to.deep.equal([{ runner: 'r3', items: [3] }]);
    await settle(3);
    expect(await first).to.equal('ok');
    expect(await Promise.all(second)).to.deep.equal(['poison', 'ok']);
    expect(batches.at(-1), 'the key’s next batch after them').to.deep.equal({ runner: 'r4', items: [4] });
    await settle(4);
    expect(await waiting).to.equal('ok');
  });

  it('fails a lone call’s failed batch at once, without running it again', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 10 });
    const call = submit('k', 1, runner('r1')).then(
      () => 'ok',
      (error: Error) => error.message,
    );
    await tick();
    await settle(0, new Error('boom'));
    expect(await call).to.equal('boom');
    expect(batches).to.deep.equal([{ runner: 'r1', items: [1] }]);
  });

  it('with gatherMs, runs a key’s first call with the calls of its key made within gatherMs, and later calls as usual', async () => {
    const { batches, runner, settle } = manualRuns();
    const submit = keyedBatches<number>({ maxBatch: 10, gatherMs: 30 });
    const calls = [submit('k', 1, runner('a')), submit('other', 9, runner('o'))];
    await new Promise((done) => setTimeout(done, 10));
    calls.push(submit('k', 2, runner('b')));
    await tick();
    expect(batches, 'nothing before the gather ends').to.deep.equal([]);
    await new Promise((done) => setTimeout(done, 40));
    expect(batches).to.deep.equal([
      { runner: 'a', items: [1, 2] },
      { runner: 'o', items: [9] },
    ]);
    calls.push(submit('k', 3, runner('c')));
    await tick();
    expect(batches, 'a call made while its key’s batch runs waits for it, not for a gather').to.have.length(
      2,
    );
    await settle(0);
    expect(batches.at(-1)).to.deep.equal({ runner: 'c', items: [3] });
    await settle(1);
    await settle(2);
    await Promise.all(calls);
  });
});
