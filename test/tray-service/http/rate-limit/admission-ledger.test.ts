import { expect } from 'chai';
import { createAdmissionLedger } from '../../../../tray-service/http/rate-limit/admission-ledger.ts';

const WINDOW_MS = 5_000;

describe('admission ledger (reads ahead of their count)', () => {
  let clock = 1_000_000;
  const now = () => clock;
  // 100 calls per window: the reserve is 10.
  const ledger = () => createAdmissionLedger({ points: 100, windowMs: WINDOW_MS, now });
  beforeEach(() => (clock = 1_000_000));

  it('lets no read of a caller it has not heard of go ahead', () => {
    expect(ledger().mayGoAhead('ana')).to.equal(false);
  });

  it('lets reads go ahead while the caller had more than the reserve left, within the window', () => {
    const admissions = ledger();
    admissions.learned('ana', 50, WINDOW_MS);
    expect(admissions.mayGoAhead('ana')).to.equal(true);
    expect(admissions.mayGoAhead('ben')).to.equal(false);
    clock += WINDOW_MS;
    expect(admissions.mayGoAhead('ana')).to.equal(false);
  });

  it('keeps the reserve, counting the reads already ahead against it', () => {
    const admissions = ledger();
    admissions.learned('ana', 11, WINDOW_MS);
    expect(admissions.mayGoAhead('ana')).to.equal(true);
    const counted = admissions.wentAhead('ana');
    expect(admissions.mayGoAhead('ana')).to.equal(false);
    counted();
    expect(admissions.mayGoAhead('ana')).to.equal(true);
    admissions.learned('ana', 10, WINDOW_MS);
    expect(admissions.mayGoAhead('ana')).to.equal(false);
  });

  it('has at most two reads of one caller ahead at once, however many calls are left', () => {
    const admissions = ledger();
    admissions.learned('ana', 90, WINDOW_MS);
    const first = admissions.wentAhead('ana');
    admissions.wentAhead('ana');
    expect(admissions.mayGoAhead('ana')).to.equal(false);
    first();
    first(); // said twice, counted once
    expect(admissions.mayGoAhead('ana')).to.equal(true);
    admissions.wentAhead('ana');
    expect(admissions.mayGoAhead('ana')).to.equal(false);
  });

  it('after a refusal lets nothing go ahead until the window ends, then waits to hear again', () => {
    const admissions = ledger();
    admissions.learned('ana', 90, WINDOW_MS);
    clock += 1_000;
    admissions.learned('ana', 0, WINDOW_MS - 1_000);
    expect(admissions.mayGoAhead('ana')).to.equal(false);
    clock += WINDOW_MS;
    expect(admissions.mayGoAhead('ana')).to.equal(false);
    admissions.learned('ana', 99, WINDOW_MS);
    expect(admissions.mayGoAhead('ana')).to.equal(true);
  });

  it('keeps the fewest calls left of one window whatever order the answers come in', () => {
    const admissions = ledger();
    admissions.learned('ana', 5, WINDOW_MS);
    admissions.learned('ana', 40, WINDOW_MS - 10);
    expect(admissions.mayGoAhead('ana')).to.equal(false);
  });

  it('forgets the oldest caller when full, who then waits for the count again', () => {
    const admissions = createAdmissionLedger({ points: 100, windowMs: WINDOW_MS, now, maxUsers: 2 });
    admissions.learned('ana', 90, WINDOW_MS);
    admissions.learned('ben', 90, WINDOW_MS);
    admissions.learned('cid', 90, WINDOW_MS);
    expect(['ana', 'ben', 'cid'].map((user) => admissions.mayGoAhead(user))).to.deep.equal([
      false,
      true,
      true,
    ]);
  });
});
