import { expect } from 'chai';
import { freePort } from '../../../scripts/lib/local-servers.ts';

describe("the scripts' local servers (scripts/lib/local-servers.ts)", () => {
  describe('freePort', () => {
    // The kernel hands out a port just closed again soon, so two calls in a row (a tray's TRAY_PORT
    // and ADMIN_PORT) once got the same port and the process refused to start.
    it('never gives one process the same port twice', async () => {
      const ports: number[] = [];
      for (let i = 0; i < 400; i += 1) ports.push(await freePort());
      expect(new Set(ports).size).to.equal(ports.length);
    });
  });
});
