import { expect } from 'chai';
import { HeartbeatLedger } from '../../../shared/mongo/heartbeat-ledger.ts';

describe('HeartbeatLedger', () => {
  it('reports a heartbeat as stuck only once it has run longer than the limit, and not after it ended', () => {
    const ledger = new HeartbeatLedger();
    ledger.started('a:1', 1_000);
    ledger.started('b:2', 5_000);
    expect(ledger.stuck(3_000, 2_000)).to.deep.equal([]);
    expect(ledger.stuck(3_001, 2_000)).to.deep.equal(['a:1']);
    expect(ledger.stuck(7_001, 2_000)).to.deep.equal(['a:1', 'b:2']);
    ledger.ended('a:1');
    expect(ledger.stuck(7_001, 2_000)).to.deep.equal(['b:2']);
  });

  it('counts from the latest start of a server, and forgets everything on clear', () => {
    const ledger = new HeartbeatLedger();
    ledger.started('a:1', 1_000);
    ledger.started('a:1', 4_000);
    expect(ledger.stuck(5_000, 2_000)).to.deep.equal([]);
    ledger.clear();
    expect(ledger.stuck(100_000, 2_000)).to.deep.equal([]);
  });
});
