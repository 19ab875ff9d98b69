import { expect } from 'chai';
import { useWorker } from '../../tray-service/worker/worker-harness.ts';
import type { TestEnvelope } from '../../tray-service/worker/event-builder.ts';
import { compareTrayWithModel, readModelTrays } from './check-tray-against-model.ts';
import { reportFigures } from './report-figures.ts';
import { socialBurstBodies } from './social-burst.ts';

// The control for the fault scenarios: the same event mix through the real worker (in process,
// concurrency 8, no fault) must match the reference model, and the check must see a change.
describe('checkTrayAgainstModel on the social burst, no fault (real worker, concurrency 8)', function () {
  this.timeout(300_000);
  const worker = useWorker({ concurrency: 8 });
  const bodies = socialBurstBodies('baseline', 400);

  before(async () => {
    await worker.deliverAll(bodies.map((event) => JSON.parse(event.body) as TestEnvelope));
  });

  it('finds the tray equal to the model', async () => {
    const stored = await readModelTrays(worker.storage, bodies);
    const check = compareTrayWithModel(stored, bodies);
    reportFigures('tray vs model, no fault', {
      events: bodies.length,
      trayRecords: check.records,
      trayUsers: check.users,
      trayMismatches: check.mismatches.length,
    });
    expect(check.mismatches.slice(0, 10)).to.deep.equal([]);
    expect(check.records, 'records the mix makes').to.be.above(50);
    const posts = stored.filter((record) => record.verb === 'post').length;
    expect(posts, 'community post records (memberships by time, late joins)').to.be.above(10);
  });

  it('reports a double-counted actor, a lost record and a record nobody caused', async () => {
    // The tray as read, changed three ways: the check compares what it is given.
    const stored = await readModelTrays(worker.storage, bodies);
    const [first, second] = stored
      .filter((record) => record.verb === 'comment')
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    const tampered = [
      ...stored.filter((record) => record !== first && record !== second),
      { ...first!, actorsCount: first!.actorsCount + 1 },
      { ...second!, key: 'comment_nobody_u-x', userId: 'u-x' },
    ];
    const check = compareTrayWithModel(tampered, bodies);
    expect(check.mismatches).to.have.deep.members([
      { key: first!.key, field: 'actorsCount', expected: first!.actorsCount, actual: first!.actorsCount + 1 },
      { key: second!.key, field: 'record', expected: 'present', actual: 'absent' },
      { key: 'comment_nobody_u-x', field: 'record', expected: 'absent', actual: 'present' },
    ]);
  });
});
