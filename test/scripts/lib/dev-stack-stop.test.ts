import { expect } from 'chai';
import { serviceStopMs } from '../../../scripts/lib/dev-stack-stop.ts';

// The stack killed a service 12 s after its SIGTERM whatever SHUTDOWN_DEADLINE_MS gave it: a drain
// the operator allowed 30 s for was cut short, and the stop read as unclean.
describe('scripts/lib/dev-stack-stop.ts serviceStopMs', () => {
  it('waits for the services’ own shutdown deadline, as the environment gives it them, and 4 s more', () => {
    expect(serviceStopMs({})).to.equal(12_000);
    expect(serviceStopMs({ SHUTDOWN_DEADLINE_MS: '30000' })).to.equal(34_000);
  });

  it('takes the default deadline for a value the services would refuse at start', () => {
    for (const refused of ['', 'soon', '100', '9999999']) {
      expect(serviceStopMs({ SHUTDOWN_DEADLINE_MS: refused }), refused).to.equal(12_000);
    }
  });
});
