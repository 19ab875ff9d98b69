import { expect } from 'chai';
import { soakFailures, type SoakMinute } from '../../../scripts/lib/soak-failures.ts';

const minute = (overrides: Partial<SoakMinute>): SoakMinute => ({
  minute: 1,
  sent: 6_000,
  non200: 0,
  rssMb: [80, 120, 120],
  heapMb: [20, 40, 40],
  loopP99Ms: [2, 3, 3],
  ackP99Ms: 4,
  apiP99Ms: 6,
  apiCalls: 1_000,
  apiFailed: 0,
  lagP99Ms: 120,
  lagCount: 3_000,
  neverArrived: 0,
  barePageP99Ms: 1.2,
  barePingP99Ms: 0.4,
  bareCalls: 1_100,
  ...overrides,
});

describe('soakFailures: a soak run whose requests failed says so (scripts/lib/soak-failures.ts)', () => {
  it('finds nothing in minutes where every delivery and read succeeded and records arrived', () => {
    expect(soakFailures([minute({ minute: 1 }), minute({ minute: 2 })])).to.deep.equal([]);
  });

  // A baseline that timed nothing (its database or Redis gone) leaves nothing to tell the
  // machine's drift from the service's: the run says so rather than print NaN and pass.
  it('names minutes the baseline timed no bare call in', () => {
    expect(soakFailures([minute({ minute: 2, bareCalls: 0 }), minute({ minute: 3 })])).to.deep.equal([
      'the baseline timed no bare call in minute 2',
    ]);
  });

  it('names refused deliveries, failed reads, records that never arrived and minutes none did', () => {
    expect(
      soakFailures([
        minute({ minute: 1, non200: 3 }),
        minute({ minute: 2, apiFailed: 2, lagCount: 0, neverArrived: 5 }),
        minute({ minute: 3, non200: 1, lagCount: 0, neverArrived: 2 }),
      ]),
    ).to.deep.equal([
      '4 deliveries were not acknowledged with 200',
      '2 history reads failed',
      '7 acknowledged deliveries reached no stream within a minute',
      'no stream record arrived in minute 2, 3',
    ]);
  });
});
