import { expect } from 'chai';
import { shutdownSteps } from '../../../shared/process/shutdown-steps.ts';

describe('shutdownSteps', () => {
  it('runs every step after one that fails, and throws that failure at the end', async () => {
    const steps = shutdownSteps();
    const ran: string[] = [];
    await Promise.all([
      steps.run(async () => {
        throw new Error('drain failed');
      }),
      steps.run(async () => void ran.push('worker closed')),
    ]);
    await steps.run(() => void ran.push('storage closed'));
    expect(ran).to.deep.equal(['worker closed', 'storage closed']);
    expect(() => steps.finish()).to.throw('drain failed');
  });

  it('throws every failure together when several steps fail, and nothing when none does', async () => {
    const failing = shutdownSteps();
    await failing.run(() => {
      throw new Error('one');
    });
    await failing.run(() => Promise.reject(new Error('two')));
    let thrown: unknown;
    try {
      failing.finish();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(AggregateError);
    expect((thrown as AggregateError).errors.map((error: Error) => error.message)).to.deep.equal([
      'one',
      'two',
    ]);
    const clean = shutdownSteps();
    await clean.run(() => undefined);
    expect(() => clean.finish()).not.to.throw();
  });
});
