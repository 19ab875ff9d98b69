import { expect } from 'chai';
import { slowCallCauses, slowCallTable } from '../../../scripts/lib/slow-call-causes.ts';

describe("the causes of bench:api's slow calls (scripts/lib/slow-call-causes.ts)", () => {
  const page = 'GET /notifications/v3/history';
  const counts = 'GET /notifications/v3';
  // Per request, in the order the server saw them; medians: Redis 0.3, SQL 0.5, total 0.9.
  const stages = (rows: readonly (readonly [redis: number, sql: number, total: number])[]) =>
    new Map([
      ['rate limit (Redis)', rows.map((row) => row[0])],
      ['storage: inbox.page', rows.map((row) => row[1])],
      ['server total', rows.map((row) => row[2])],
    ]);
  const usual = [0.3, 0.5, 0.9] as const;

  it('names the late stage of each slow call: SQL, Redis, both at once, or none (outside or elsewhere)', () => {
    const result = slowCallCauses(
      [{ route: page, api: [1, 3, 3, 3, 3, 3, 1], slowOverMs: 2 }],
      new Map([
        [
          page,
          stages([
            usual,
            [0.3, 2.4, 2.8], // SQL late
            [2.4, 0.5, 2.8], // Redis late
            [2.3, 2.4, 2.8], // both: the process
            [0.3, 0.5, 0.9], // the client waited 3 ms for a 0.9 ms answer
            [0.3, 0.5, 2.8], // the handler took long, in no timed stage
            usual,
          ]),
        ],
      ]),
    );
    expect(result.calls).to.equal(7);
    expect(result.slow).to.equal(5);
    expect(Object.fromEntries(result.byCause)).to.deep.equal({
      sql: 1,
      redis: 1,
      process: 1,
      outside: 1,
      handler: 1,
    });
  });

  it('pairs each call with its own request when several calls share a route', () => {
    // Per round: the first page, the deep page (both the history route), then the counts.
    const calls = [
      { route: page, api: [1, 1, 1], slowOverMs: 2 },
      { route: page, api: [1, 5, 1], slowOverMs: 2 },
      { route: counts, api: [1, 1, 1], slowOverMs: 2 },
    ];
    // The deep page of round 2 is the history route's 4th request (index 3): its SQL was late.
    const history = stages([usual, usual, usual, [0.3, 4.5, 4.9], usual, usual]);
    const result = slowCallCauses(
      calls,
      new Map([
        [page, history],
        [counts, stages([usual, usual, usual])],
      ]),
    );
    expect(result.calls).to.equal(9);
    expect(result.slow).to.equal(1);
    expect(result.byCause.get('sql')).to.equal(1);
    // Paired with the wrong request (index 1, on time) it would have been "outside the handler".
    expect(result.byCause.get('outside')).to.equal(0);
  });

  it('refuses to guess when the stage times do not cover a slow call', () => {
    expect(() =>
      slowCallCauses([{ route: page, api: [3], slowOverMs: 2 }], new Map([[counts, stages([usual])]])),
    ).to.throw('no stage times for GET /notifications/v3/history');
  });

  it('prints one row per user, the causes in a fixed order', () => {
    const slow = slowCallCauses(
      [{ route: page, api: [3, 1, 1], slowOverMs: 2 }],
      new Map([[page, stages([[0.3, 2.4, 2.8], usual, usual])]]),
    );
    const table = slowCallTable([{ userId: 'bench-user', slow }], "the floor's p99 + 1.5 ms");
    expect(table[0]).to.equal(
      "| calls over the floor's p99 + 1.5 ms | calls | slow | SQL late | Redis late | SQL and Redis late together | outside the handler | elsewhere in the handler |",
    );
    expect(table[2]).to.equal('| bench-user | 3 | 1 | 1 | 0 | 0 | 0 | 0 |');
  });
});
