import { expect } from 'chai';
import { ConfigError } from '../../../shared/errors/config-error.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';

describe('tray configuration', () => {
  describe('TRAY_WORKER_CONCURRENCY and TRAY_FANOUT_CONCURRENCY', () => {
    it('default to 64 jobs and 4 fan-outs at once', () => {
      const config = loadTrayConfig({});
      expect(config.TRAY_WORKER_CONCURRENCY).to.equal(64);
      expect(config.TRAY_FANOUT_CONCURRENCY).to.equal(4);
    });

    it('take their bounds themselves: 1 and 64 fan-outs, 1 and 256 jobs', () => {
      for (const value of [1, 64]) {
        expect(loadTrayConfig({ TRAY_FANOUT_CONCURRENCY: String(value) }).TRAY_FANOUT_CONCURRENCY).to.equal(
          value,
        );
      }
      for (const value of [1, 256]) {
        expect(loadTrayConfig({ TRAY_WORKER_CONCURRENCY: String(value) }).TRAY_WORKER_CONCURRENCY).to.equal(
          value,
        );
      }
    });

    it('refuse 0 and values above their bound, naming the variable', () => {
      for (const [name, value] of [
        ['TRAY_FANOUT_CONCURRENCY', '0'],
        ['TRAY_FANOUT_CONCURRENCY', '65'],
        ['TRAY_WORKER_CONCURRENCY', '257'],
      ] as const) {
        expect(() => loadTrayConfig({ [name]: value }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.contains(`${name}:`);
      }
    });
  });

  // Seconds written where milliseconds are meant (a timeout of "5") made PostgreSQL cancel every
  // real statement, every moderation call time out, a ban poll run back to back and the purge warn
  // each millisecond: such values are refused, naming the variable.
  describe('millisecond settings with a floor', () => {
    const floors = [
      ['PG_STATEMENT_TIMEOUT_MS', 100],
      ['TRAY_PURGE_INTERVAL_MS', 1_000],
      ['BAN_REFRESH_MS', 100],
      ['MODERATION_WEBHOOK_TIMEOUT_MS', 100],
    ] as const;

    it('refuse a value below the floor, naming the variable and the range', () => {
      for (const [name, floor] of floors) {
        expect(() => loadTrayConfig({ [name]: String(floor - 1) }), name)
          .to.throw(ConfigError)
          .with.property('message')
          .that.contains(`${name}: expected a whole number from ${floor} to`);
      }
    });

    it('take the floor itself', () => {
      for (const [name, floor] of floors) {
        expect(loadTrayConfig({ [name]: String(floor) })[name], name).to.equal(floor);
      }
    });
  });

  describe('TRAY_RETRY_FIRST_DELAY_MS and TRAY_RETRY_MAX_DELAY_MS', () => {
    it('default to the product retry policy: 1 s doubling up to 30 s', () => {
      const config = loadTrayConfig({});
      expect([config.TRAY_RETRY_FIRST_DELAY_MS, config.TRAY_RETRY_MAX_DELAY_MS]).to.deep.equal([
        1_000, 30_000,
      ]);
    });

    it('refuse a first delay above the longest, naming it (it would be cut to the longest at once)', () => {
      expect(() => loadTrayConfig({ TRAY_RETRY_FIRST_DELAY_MS: '60000', TRAY_RETRY_MAX_DELAY_MS: '30000' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.contains('TRAY_RETRY_FIRST_DELAY_MS: must be at most TRAY_RETRY_MAX_DELAY_MS (30000)');
      expect(
        loadTrayConfig({ TRAY_RETRY_FIRST_DELAY_MS: '30000', TRAY_RETRY_MAX_DELAY_MS: '30000' })
          .TRAY_RETRY_FIRST_DELAY_MS,
      ).to.equal(30_000);
    });

    it('refuse 0 and fractions, naming the variable', () => {
      for (const [name, value] of [
        ['TRAY_RETRY_FIRST_DELAY_MS', '0'],
        ['TRAY_RETRY_MAX_DELAY_MS', '1.5'],
      ] as const) {
        expect(() => loadTrayConfig({ [name]: value }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.contains(`${name}:`);
      }
    });
  });

  describe('TRAY_JOB_LOCK_MS', () => {
    it("defaults to bull's 30 s lock and stalled-job check", () => {
      expect(loadTrayConfig({}).TRAY_JOB_LOCK_MS).to.equal(30_000);
      expect(loadTrayConfig({ TRAY_JOB_LOCK_MS: '5000' }).TRAY_JOB_LOCK_MS).to.equal(5_000);
    });

    it('takes its bounds themselves: 1 s and 10 minutes', () => {
      for (const value of [1_000, 600_000])
        expect(loadTrayConfig({ TRAY_JOB_LOCK_MS: String(value) }).TRAY_JOB_LOCK_MS).to.equal(value);
    });

    it('refuses less than 1 s, more than 10 minutes and fractions, naming the variable', () => {
      for (const value of ['999', '600001', '1500.5']) {
        expect(() => loadTrayConfig({ TRAY_JOB_LOCK_MS: value }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.contains('TRAY_JOB_LOCK_MS: expected a whole number from 1000 to 600000');
      }
    });
  });

  describe('TRAY_ROLE', () => {
    it('is "all" by default and takes "api" or "worker"', () => {
      expect(loadTrayConfig({}).TRAY_ROLE).to.equal('all');
      for (const role of ['api', 'worker'] as const)
        expect(loadTrayConfig({ TRAY_ROLE: role }).TRAY_ROLE).to.equal(role);
    });

    it('refuses anything else, naming the variable and the choices', () => {
      expect(() => loadTrayConfig({ TRAY_ROLE: 'both' }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.contains('TRAY_ROLE: expected "all", "api" or "worker"');
    });
  });
});
