import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobScope } from '../../../shared/async/job-scope.ts';

describe('jobScope', () => {
  it('names no job outside any', () => {
    expect(jobScope.current()).to.equal(undefined);
  });

  it('names the job through everything its work awaits, and only there', async () => {
    const seen = await jobScope.run('job-a', async () => {
      await sleep(1);
      const later = await new Promise<string | undefined>((resolve) =>
        setTimeout(() => resolve(jobScope.current()), 1),
      );
      return [jobScope.current(), later];
    });
    expect(seen).to.deep.equal(['job-a', 'job-a']);
    expect(jobScope.current()).to.equal(undefined);
  });

  it('keeps jobs running at once apart, and an inner job wins inside it', async () => {
    const seen = await Promise.all(
      ['job-1', 'job-2', 'job-3'].map((key, index) =>
        jobScope.run(key, async () => {
          await sleep(3 - index);
          const inner = await jobScope.run(`${key}-inner`, async () => jobScope.current());
          return [jobScope.current(), inner];
        }),
      ),
    );
    expect(seen).to.deep.equal([
      ['job-1', 'job-1-inner'],
      ['job-2', 'job-2-inner'],
      ['job-3', 'job-3-inner'],
    ]);
  });
});
