import { expect } from 'chai';
import { benchFailures } from '../../../scripts/lib/bench-receiver-report.ts';

describe('benchFailures: a receiver bench whose requests failed says so (scripts/lib/bench-receiver-report.ts)', () => {
  it('finds nothing when every request of every run was answered 2xx', () => {
    expect(
      benchFailures([
        { round: 1, mode: 'bare', non2xx: 0, errors: 0, total: 190_000 },
        { round: 1, mode: 'receiver', non2xx: 0, errors: 0, total: 90_000 },
      ]),
    ).to.deep.equal([]);
  });

  it('names each run with refusals, errors or timeouts', () => {
    expect(
      benchFailures([
        { round: 1, mode: 'bare', non2xx: 0, errors: 0, total: 190_000 },
        { round: 1, mode: 'receiver', non2xx: 12, errors: 0, total: 90_000 },
        { round: 2, mode: 'receiver', non2xx: 0, errors: 3, total: 91_000 },
      ]),
    ).to.deep.equal([
      'round 1, receiver: 12 answers not 2xx and 0 errors or timeouts of 90000 requests',
      'round 2, receiver: 0 answers not 2xx and 3 errors or timeouts of 91000 requests',
    ]);
  });
});
