import { expect } from 'chai';
import {
  metricsPortsProblem,
  ownRedisWanted,
  serviceEnvironments,
  stackDefaults,
} from '../../../scripts/lib/stack-settings.ts';

const secrets = { JWT_SECRET: 'j'.repeat(43), WEBHOOK_SECRET: 'w'.repeat(43), ADMIN_TOKEN: 'a'.repeat(43) };

describe('npm start’s settings', () => {
  describe('stackDefaults', () => {
    it('gives the stack’s token secret when the operator set no token key', () => {
      expect(stackDefaults(secrets, '/spool', {})).to.include({ JWT_SECRET: secrets.JWT_SECRET });
    });

    it('gives none beside the operator’s own key, of whichever kind', () => {
      for (const key of ['JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWT_JWKS_URL'])
        expect(stackDefaults(secrets, '/spool', { [key]: 'theirs' }), key).not.to.have.property('JWT_SECRET');
    });
  });

  describe('ownRedisWanted', () => {
    it('starts a Redis of the stack’s own unless the operator names a server or a cluster', () => {
      expect(ownRedisWanted({})).to.equal(true);
      expect(ownRedisWanted({ REDIS_URL: 'redis://10.0.0.1:6379' })).to.equal(false);
      // REDIS_URL then gives only the nodes' password: the stack's own must not reach them.
      expect(ownRedisWanted({ REDIS_CLUSTER_NODES: '10.0.0.1:7000' })).to.equal(false);
    });
  });

  describe('serviceEnvironments', () => {
    it('gives the receiver METRICS_PORT and the tray service the next port', () => {
      const { receiver, tray } = serviceEnvironments({ METRICS_PORT: '9100', TRAY_PORT: '8081' });
      expect(receiver).to.deep.equal({ METRICS_PORT: '9100', TRAY_PORT: '8081' });
      expect(tray).to.deep.equal({ METRICS_PORT: '9101', TRAY_PORT: '8081' });
    });

    it('leaves both alone without METRICS_PORT, or with one that is no port (the receiver refuses it)', () => {
      for (const env of [{}, { METRICS_PORT: 'ninety' }]) {
        const { receiver, tray } = serviceEnvironments(env);
        expect(tray).to.deep.equal(env);
        expect(receiver).to.deep.equal(env);
      }
    });
  });

  describe('metricsPortsProblem', () => {
    const listeners = { RECEIVER_PORT: '8080', TRAY_PORT: '8081', ADMIN_PORT: '8082' };

    it('takes two free ports in a row that are no other listener’s', () => {
      expect(metricsPortsProblem({ METRICS_PORT: '9100' }, listeners)).to.equal(undefined);
      expect(metricsPortsProblem({}, listeners)).to.equal(undefined);
    });

    it('names METRICS_PORT when the next port is no port', () => {
      expect(metricsPortsProblem({ METRICS_PORT: '65535' }, listeners)).to.equal(
        "METRICS_PORT: 65535 leaves no next port for the tray service's metrics; set a lower one",
      );
    });

    it('names METRICS_PORT and the listener when either port is another listener’s', () => {
      expect(metricsPortsProblem({ METRICS_PORT: '8079' }, listeners)).to.equal(
        "METRICS_PORT: 8079 and the next port (the tray service's metrics) must differ from RECEIVER_PORT (8080)",
      );
      expect(metricsPortsProblem({ METRICS_PORT: '8082' }, listeners)).to.match(/ADMIN_PORT \(8082\)/);
    });
  });
});
