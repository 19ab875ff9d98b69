import { expect } from 'chai';
import { hostCpu, hostShares, parseHostCpu } from '../../../scripts/lib/host-cpu.ts';

describe("the machine's CPU counters (scripts/lib/host-cpu.ts)", () => {
  const stat = (fields: string) => `cpu  ${fields} 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\nintr 12345\n`;

  it('counts user, nice, system, irq and softirq as busy; idle, iowait and steal apart; in seconds', () => {
    // user nice system idle iowait irq softirq steal
    expect(parseHostCpu(stat('100 20 30 400 50 5 15 80'))).to.deep.equal({
      busy: 1.7,
      steal: 0.8,
      total: 7,
    });
  });

  it('gives shares of the whole machine between two readings', () => {
    const before = parseHostCpu(stat('100 0 0 100 0 0 0 0'));
    const after = parseHostCpu(stat('250 0 50 250 0 0 0 50'));
    const shares = hostShares(before, after);
    expect(shares.busy).to.be.closeTo(0.5, 1e-9);
    expect(shares.steal).to.be.closeTo(0.125, 1e-9);
    expect(shares.busySeconds).to.be.closeTo(2, 1e-9);
    expect(shares.totalSeconds).to.be.closeTo(4, 1e-9);
  });

  it("reads this machine's /proc/stat, whose counters only grow", () => {
    const first = hostCpu();
    const second = hostCpu();
    expect(first.total).to.be.greaterThan(0);
    expect(second.total).to.be.at.least(first.total);
    expect(second.busy).to.be.at.least(first.busy);
  });
});
