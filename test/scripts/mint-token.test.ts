import { expect } from 'chai';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateDevSecrets } from '../../scripts/lib/dev-secrets.ts';
import { resolveJwtConfig } from '../../shared/config/tray-api-config.ts';
import { createTokenVerifier } from '../../tray-service/http/auth/create-token-verifier.ts';
import { cleanEnv, runScript } from '../support/run-script.ts';

const SECRET = 'mint-token-test-secret-of-32-chars-plus';

describe('scripts/mint-token.ts', () => {
  it('--help prints the usage and exits 0', async () => {
    const result = await runScript('scripts/mint-token.ts', ['--help'], cleanEnv());
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/^Usage: npm run mint-token -- --user <id>/);
  });

  it('without --user exits 2 with the usage on stderr', async () => {
    const result = await runScript('scripts/mint-token.ts', [], cleanEnv());
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('--user is required');
  });

  it('answers operator mistakes with one line and exit 2, never a stack trace', async () => {
    const env = cleanEnv({ JWT_SECRET: SECRET });
    for (const [args, says] of [
      [['--user', 'u-1', '--color'], "Unknown option '--color'"],
      [['--user', 'u-1', '--ttl', 'abc'], '--ttl: expected a duration such as 30m, 1h or 30d'],
      // An already expired token would be refused by the tray: a lifetime must lie ahead.
      [['--user', 'u-1', '--ttl=-1h'], '--ttl: expected a duration such as 30m, 1h or 30d'],
      [['--user', 'u-1', '--ttl', '1h ago'], '--ttl: expected a duration such as 30m, 1h or 30d'],
      [['--user', 'u-1', '--ttl', '0s'], '--ttl: expected a duration such as 30m, 1h or 30d'],
      // jose rounds to whole seconds: a token expired as it is printed.
      [['--user', 'u-1', '--ttl', '0.4s'], '--ttl: expected a duration such as 30m, 1h or 30d'],
      [['--user', 'u-1', '--private-key', '/nonexistent/key.pem'], 'cannot read /nonexistent/key.pem'],
      // `--issuer "$ISS"` with ISS unset dropped the claim, and a tray that checks it answered 401.
      [['--user', 'u-1', '--issuer', ''], '--issuer: expected a value, got an empty one'],
      [['--user', 'u-1', '--audience='], '--audience: expected a value, got an empty one'],
    ] as const) {
      const result = await runScript('scripts/mint-token.ts', [...args], env);
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stderr, args.join(' ')).to.include(says);
      expect(result.stderr, args.join(' ')).to.not.match(/^\s+at /m);
      expect(result.stdout, args.join(' ')).to.equal('');
    }
  });

  it('refuses an --alg that cannot sign with the key given: exit 2, the reason and a usage line', async () => {
    const env = cleanEnv({ JWT_SECRET: SECRET });
    for (const [args, says] of [
      [['--alg', 'RS256'], '--alg RS256 signs with a private key: add --private-key <file>'],
      [['--alg', 'HS999'], '--alg: expected one of HS256, HS384, HS512 (with JWT_SECRET) or RS256,'],
      [
        ['--alg', 'HS256', '--private-key', '/some/key.pem'],
        '--alg HS256 signs with JWT_SECRET, not --private-key',
      ],
    ] as const) {
      const result = await runScript('scripts/mint-token.ts', ['--user', 'u-1', ...args], env);
      expect(result.code, args.join(' ')).to.equal(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines, args.join(' ')).to.have.lengthOf(2);
      expect(lines[0], args.join(' ')).to.include(says);
      expect(lines[1], args.join(' ')).to.match(/^Usage: npm run mint-token -- --user <id>/);
      expect(result.stdout, args.join(' ')).to.equal('');
    }
  });

  it('mints an HS256 token with JWT_SECRET, issuer and audience that the API accepts', async () => {
    const env = cleanEnv({ JWT_SECRET: SECRET, JWT_ISSUER: 'dev', JWT_AUDIENCE: 'tray' });
    const result = await runScript('scripts/mint-token.ts', ['--user', 'alice', '--ttl', '5m'], env);
    expect(result.code).to.equal(0);
    const verify = createTokenVerifier(
      resolveJwtConfig({ JWT_SECRET: SECRET, JWT_ISSUER: 'dev', JWT_AUDIENCE: 'tray' }),
    );
    const { userId, claims } = await verify(result.stdout.trim());
    expect(userId).to.equal('alice');
    expect(claims.exp! - claims.iat!).to.equal(300);
  });

  // The services trim what they read: a secret sourced from a CRLF env file kept its `\r` here, and
  // every token it minted was refused with 401.
  it('reads JWT_SECRET, JWT_ISSUER and JWT_AUDIENCE trimmed, as the tray does', async () => {
    const env = cleanEnv({ JWT_SECRET: `${SECRET}\r`, JWT_ISSUER: ' dev\r', JWT_AUDIENCE: 'tray\r' });
    const result = await runScript('scripts/mint-token.ts', ['--user', 'alice', '--ttl', '5m'], env);
    expect(result.code, result.stderr).to.equal(0);
    const verify = createTokenVerifier(
      resolveJwtConfig({ JWT_SECRET: SECRET, JWT_ISSUER: 'dev', JWT_AUDIENCE: 'tray' }),
    );
    expect((await verify(result.stdout.trim())).userId).to.equal('alice');
  });

  // With JWT_SECRET the tray verifies HS256 unless JWT_ALGORITHMS lists more: an HS512 token was
  // printed with exit 0 and no word, and every call with it was refused with 401.
  it('warns when the tray as configured here would refuse the algorithm, and still prints the token', async () => {
    const hs512 = await runScript(
      'scripts/mint-token.ts',
      ['--user', 'alice', '--alg', 'HS512'],
      cleanEnv({ JWT_SECRET: SECRET }),
    );
    expect(hs512.code, hs512.stderr).to.equal(0);
    expect(hs512.stdout.trim().split('.')).to.have.lengthOf(3);
    expect(hs512.stderr).to.equal(
      'warning: a tray with JWT_ALGORITHMS unset refuses HS512 tokens (401): list HS512 in its JWT_ALGORITHMS\n',
    );
    const listed = await runScript(
      'scripts/mint-token.ts',
      ['--user', 'alice', '--alg', 'HS512'],
      cleanEnv({ JWT_SECRET: SECRET, JWT_ALGORITHMS: 'HS256, HS512' }),
    );
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stderr).to.equal('');
    // A list the tray itself would refuse at start-up: said, and the token printed all the same.
    const malformed = await runScript(
      'scripts/mint-token.ts',
      ['--user', 'alice'],
      cleanEnv({ JWT_SECRET: SECRET, JWT_ALGORITHMS: 'HS256,' }),
    );
    expect(malformed.code, malformed.stderr).to.equal(0);
    expect(malformed.stdout.trim().split('.')).to.have.lengthOf(3);
    expect(malformed.stderr).to.match(/^warning: JWT_ALGORITHMS: /);
  });

  it('mints an RS256 token with --private-key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mint-'));
    try {
      const keys = await generateKeyPair('RS256', { extractable: true });
      writeFileSync(join(dir, 'key.pem'), await exportPKCS8(keys.privateKey));
      const result = await runScript(
        'scripts/mint-token.ts',
        ['--user', 'bob', '--private-key', join(dir, 'key.pem')],
        cleanEnv(),
      );
      expect(result.code).to.equal(0);
      const verify = createTokenVerifier(
        resolveJwtConfig({ JWT_PUBLIC_KEY: await exportSPKI(keys.publicKey) }),
      );
      expect((await verify(result.stdout.trim())).userId).to.equal('bob');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('without JWT_SECRET', () => {
    let dataDir: string;
    beforeEach(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'mint-data-'));
    });
    afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

    it('signs with the secret npm start made for this machine', async () => {
      const { secrets } = loadOrCreateDevSecrets(dataDir);
      const result = await runScript(
        'scripts/mint-token.ts',
        ['--user', 'ana'],
        cleanEnv({ STACK_DATA_DIR: dataDir }),
      );
      expect(result.code).to.equal(0);
      const verify = createTokenVerifier(resolveJwtConfig({ JWT_SECRET: secrets.JWT_SECRET }));
      expect((await verify(result.stdout.trim())).userId).to.equal('ana');
    });

    // The stack drops its own secret when the operator's key is set, so a token signed with that
    // secret was printed, exit 0, and refused by the tray with 401.
    it('exits 2 naming --private-key when JWT_PUBLIC_KEY or JWT_JWKS_URL says the tray uses your key', async () => {
      loadOrCreateDevSecrets(dataDir);
      const { publicKey } = await generateKeyPair('RS256');
      const pem = await exportSPKI(publicKey);
      for (const [variable, value] of [
        ['JWT_PUBLIC_KEY', pem],
        ['JWT_JWKS_URL', 'https://idp.example/.well-known/jwks.json'],
      ] as const) {
        const result = await runScript(
          'scripts/mint-token.ts',
          ['--user', 'ana'],
          cleanEnv({ STACK_DATA_DIR: dataDir, [variable]: value }),
        );
        expect(result.code, variable).to.equal(2);
        expect(result.stdout, variable).to.equal('');
        expect(result.stderr, variable).to.include(
          `${variable} is set: the tray verifies tokens with your key, so sign with its private key ` +
            '(--private-key <file>)',
        );
      }
    });

    it('reads a relative STACK_DATA_DIR from the folder `npm run` was typed in', async () => {
      const { secrets } = loadOrCreateDevSecrets(join(dataDir, 'stack'));
      const result = await runScript(
        'scripts/mint-token.ts',
        ['--user', 'ana'],
        cleanEnv({ STACK_DATA_DIR: 'stack', INIT_CWD: dataDir, npm_lifecycle_event: 'mint-token' }),
      );
      expect(result.code, result.stderr).to.equal(0);
      const verify = createTokenVerifier(resolveJwtConfig({ JWT_SECRET: secrets.JWT_SECRET }));
      expect((await verify(result.stdout.trim())).userId).to.equal('ana');
    });

    it('exits 2 naming JWT_SECRET when npm start has not made any', async () => {
      const result = await runScript(
        'scripts/mint-token.ts',
        ['--user', 'ana'],
        cleanEnv({ STACK_DATA_DIR: dataDir }),
      );
      expect(result.code).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.include('JWT_SECRET: not set, and there are no development secrets');
    });
  });
});
