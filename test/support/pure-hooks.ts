import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';

// Root hooks for the pure unit tests alone (mutation testing): the assertion plugins, and none
// of the servers that test/support/root-hooks.ts starts.
chai.use(chaiAsPromised);
