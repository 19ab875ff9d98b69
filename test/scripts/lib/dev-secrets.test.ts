import { expect } from 'chai';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import {
  devDataDir,
  devSecretOr,
  devSecretsPath,
  loadOrCreateDevSecrets,
  readDevSecrets,
} from '../../../scripts/lib/dev-secrets.ts';
import { runCommand } from '../../support/run-script.ts';
import { unprivileged, unprivilegedFolder } from '../../support/unprivileged.ts';

describe('the development stack’s secrets (scripts/lib/dev-secrets.ts)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dev-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('are made on the first run: random, long, in a file only its owner can read', () => {
    const { secrets, created } = loadOrCreateDevSecrets(join(dir, 'data'));
    expect(created).to.equal(true);
    const values = Object.values(secrets);
    expect(Object.keys(secrets)).to.have.members([
      'JWT_SECRET',
      'WEBHOOK_SECRET',
      'ADMIN_TOKEN',
      'REDIS_PASSWORD',
      'POSTGRES_PASSWORD',
    ]);
    for (const value of values) expect(value).to.match(/^[\w-]{43}$/);
    expect(new Set(values).size).to.equal(5);
    expect(statSync(devSecretsPath(join(dir, 'data'))).mode & 0o777).to.equal(0o600);
  });

  it('are reused on later runs, and differ from another data directory’s', () => {
    const first = loadOrCreateDevSecrets(dir).secrets;
    const again = loadOrCreateDevSecrets(dir);
    expect(again.created).to.equal(false);
    expect(again.secrets).to.deep.equal(first);
    const { REDIS_PASSWORD: _redis, POSTGRES_PASSWORD: _postgres, ...tools } = first;
    expect(readDevSecrets(dir)).to.deep.equal(tools);
    const other = mkdtempSync(join(tmpdir(), 'dev-secrets-other-'));
    try {
      expect(loadOrCreateDevSecrets(other).secrets.JWT_SECRET).not.to.equal(first.JWT_SECRET);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("add the servers' passwords to a file of an earlier version, keeping its secrets and its mode", () => {
    const old = { JWT_SECRET: 'j'.repeat(43), WEBHOOK_SECRET: 'w'.repeat(43), ADMIN_TOKEN: 'a'.repeat(43) };
    writeFileSync(devSecretsPath(dir), JSON.stringify(old), { mode: 0o600 });
    expect(readDevSecrets(dir)).to.deep.equal(old);
    const { secrets, created, added } = loadOrCreateDevSecrets(dir);
    expect(created).to.equal(false);
    expect(added).to.deep.equal(['REDIS_PASSWORD', 'POSTGRES_PASSWORD']);
    expect(secrets).to.include(old);
    expect(secrets.POSTGRES_PASSWORD).to.match(/^[\w-]{43}$/);
    expect(JSON.parse(readFileSync(devSecretsPath(dir), 'utf8'))).to.deep.equal(secrets);
    expect(statSync(devSecretsPath(dir)).mode & 0o777).to.equal(0o600);
    expect(loadOrCreateDevSecrets(dir)).to.deep.equal({ secrets, created: false, added: [] });
  });

  it('put a widened file mode back to 0600', () => {
    loadOrCreateDevSecrets(dir);
    chmodSync(devSecretsPath(dir), 0o644);
    loadOrCreateDevSecrets(dir);
    expect(statSync(devSecretsPath(dir)).mode & 0o777).to.equal(0o600);
  });

  it('refuse a file with a short or missing secret, saying to delete it', () => {
    writeFileSync(devSecretsPath(dir), JSON.stringify({ JWT_SECRET: 'x', WEBHOOK_SECRET: 'y' }), {
      mode: 0o600,
    });
    expect(() => loadOrCreateDevSecrets(dir)).to.throw('JWT_SECRET is missing or shorter than 32 characters');
  });

  // A first start cut off between creating the file and writing it (disk full, power) left it
  // empty, and every later start and tool failed with "Unexpected end of JSON input".
  it('refuse a file that is not whole JSON, naming it and saying to delete it', () => {
    for (const content of ['', '{"JWT_SECRET": "abc']) {
      writeFileSync(devSecretsPath(dir), content, { mode: 0o600 });
      for (const read of [() => loadOrCreateDevSecrets(dir), () => readDevSecrets(dir)])
        expect(read)
          .to.throw(`${devSecretsPath(dir)}: not valid JSON`)
          .with.property('message')
          .that.matches(/delete the file/);
    }
  });

  // The parser's message quotes the text around the fault: a value that lost its quotes showed
  // some of its secret on the terminal (or a CI log).
  it('name no character of a damaged file’s secrets', () => {
    writeFileSync(devSecretsPath(dir), '{"ADMIN_TOKEN": ZxcvSecretToken1234}', { mode: 0o600 });
    expect(() => readDevSecrets(dir))
      .to.throw(`${devSecretsPath(dir)}: not valid JSON`)
      .with.property('message')
      .that.does.not.match(/Zxcv/);
  });

  /**
   * mint-token run by another account than the stack's (root, or this user) on the stack's secrets
   * in a data folder of mode `folderMode`; `unreadable` makes them so for a test run as a user,
   * whom the modes of their own files do not stop as they stop another account.
   */
  async function mintTokenAsAnother(folderMode: number, unreadable: (data: string) => void) {
    const data = join(unprivilegedFolder(dir, 'home'), 'data');
    loadOrCreateDevSecrets(data);
    chmodSync(data, folderMode);
    const { command, args } = unprivileged(process.execPath, ['scripts/mint-token.ts', '--user', 'ana']);
    if (process.getuid?.() !== 0) unreadable(data);
    try {
      return {
        data,
        result: await runCommand(command, args, { PATH: process.env.PATH, STACK_DATA_DIR: data }),
      };
    } finally {
      chmodSync(data, 0o700);
      chmodSync(devSecretsPath(data), 0o600);
    }
  }

  // The stack run as root keeps its data folder 0700: a tool run by another account cannot read
  // the file, and told it to run `npm start` for secrets that were there.
  it('that cannot be read fail the tool naming the file and why, not as missing', async function () {
    this.timeout(30_000);
    const { data, result } = await mintTokenAsAnother(0o700, (folder) => chmodSync(folder, 0o000));
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include(
      `JWT_SECRET: not set, and ${devSecretsPath(data)} cannot be read (EACCES)`,
    );
    expect(result.stderr).not.to.match(/run `npm start` once/);
  });

  // The stack lets its PostgreSQL through its data folder (0710 to the group): a member of that
  // group passes the folder and cannot read the 0600 file, which was then taken for damaged.
  it('in a folder the tool may pass but a file it may not read fail naming the file and why', async function () {
    this.timeout(30_000);
    const { data, result } = await mintTokenAsAnother(0o711, (folder) =>
      chmodSync(devSecretsPath(folder), 0o000),
    );
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include(
      `JWT_SECRET: not set, and ${devSecretsPath(data)} cannot be read (EACCES)`,
    );
  });

  it('are created whole or not at all: no file is ever seen half-written', () => {
    loadOrCreateDevSecrets(dir);
    expect(readdirSync(dir)).to.deep.equal(['dev-secrets.json']);
  });

  describe('devSecretOr (the tools’ fallback)', () => {
    it('prefers the variable, else reads the stack’s file', () => {
      const { secrets } = loadOrCreateDevSecrets(dir);
      expect(devSecretOr('JWT_SECRET', 'from-env', 'JWT_SECRET', { STACK_DATA_DIR: dir })).to.equal(
        'from-env',
      );
      expect(devSecretOr('JWT_SECRET', undefined, 'JWT_SECRET', { STACK_DATA_DIR: dir })).to.equal(
        secrets.JWT_SECRET,
      );
      expect(JSON.parse(readFileSync(devSecretsPath(dir), 'utf8'))).to.deep.equal(secrets);
    });
    it('names the variable and says how to get secrets when there are none', () => {
      expect(() =>
        devSecretOr('WEBHOOK_SECRET', undefined, 'WEBHOOK_SECRET', { STACK_DATA_DIR: dir }),
      ).to.throw(
        /WEBHOOK_SECRET: not set, and there are no development secrets in .*: set WEBHOOK_SECRET, or run `npm start` once/,
      );
    });
  });
});

// PostgreSQL and Redis change into their own folders before they use the paths they are given: a
// relative STACK_DATA_DIR made PostgreSQL fail to create its socket's lock file, and `npm start`
// stopped at once.
describe('the development stack’s data directory (devDataDir)', () => {
  it('is absolute, whatever STACK_DATA_DIR gives: a relative one counts from the current directory', () => {
    expect(devDataDir({ STACK_DATA_DIR: 'mydata' })).to.equal(resolve('mydata'));
    expect(devDataDir({ STACK_DATA_DIR: './a/../b' })).to.equal(resolve('b'));
    expect(devDataDir({ STACK_DATA_DIR: '/srv/tray' })).to.equal('/srv/tray');
    expect(isAbsolute(devDataDir({}))).to.equal(true);
  });

  // npm runs every script at the checkout's root: `cd ops && STACK_DATA_DIR=stack npm start` kept
  // its data in <root>/stack, not where the command was typed, as every path the tools take does.
  it('counts a relative one from the folder `npm run` was typed in (INIT_CWD)', () => {
    const env = { STACK_DATA_DIR: 'stack', INIT_CWD: '/srv/ops', npm_lifecycle_event: 'start' };
    expect(devDataDir(env)).to.equal('/srv/ops/stack');
    expect(devDataDir({ ...env, STACK_DATA_DIR: '/srv/tray' })).to.equal('/srv/tray');
  });
});
