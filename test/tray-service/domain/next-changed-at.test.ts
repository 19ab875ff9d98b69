import { expect } from 'chai';
import { nextChangedAt } from '../../../tray-service/domain/next-changed-at.ts';

describe('nextChangedAt', () => {
  const now = Date.parse('2026-11-20T11:00:00.000Z');

  it("is the writer's clock for a new record and for one last changed before it", () => {
    expect(nextChangedAt(undefined, now)).to.equal(now);
    expect(nextChangedAt(now - 1, now)).to.equal(now);
  });

  it('is just after the current state when the clock is not later (a clock behind, the same millisecond)', () => {
    expect(nextChangedAt(now, now)).to.equal(now + 1);
    expect(nextChangedAt(now + 60_000, now)).to.equal(now + 60_001);
  });
});
