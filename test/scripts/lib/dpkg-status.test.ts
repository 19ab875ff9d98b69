import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../support/run-script.ts';

/**
 * Whether scripts/lib/dpkg-status.sh reads `status` as an install that did not finish, of a package
 * last configured at `configured` (dpkg's Config-Version; empty: never).
 */
function halfInstalled(status: string, configured = ''): boolean {
  const run = spawnSync(
    'bash',
    ['-c', 'source scripts/lib/dpkg-status.sh && status_half_installed "$0" "$1"', status, configured],
    {
      cwd: repoRoot,
      // stdin not a socket: bash sources ~/.bashrc when it looks run by a remote shell daemon.
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (run.status !== 0 && run.status !== 1)
    throw new Error(`bash exited ${run.status}: ${run.stderr.toString()}`);
  return run.status === 0;
}

describe('scripts/lib/dpkg-status.sh: which dpkg states setup.sh installs again', () => {
  it('reads an installed package as finished, held (apt-mark hold) or not', () => {
    expect(halfInstalled('install ok installed')).to.equal(false);
    expect(halfInstalled('hold ok installed')).to.equal(false);
  });

  it('reads a package dpkg never installed, or removed with its configuration kept, as not half installed', () => {
    expect(halfInstalled('unknown ok not-installed')).to.equal(false);
    expect(halfInstalled('deinstall ok config-files')).to.equal(false);
    expect(halfInstalled('')).to.equal(false);
  });

  it('reads an install cut short as half installed, whatever is wanted next', () => {
    for (const status of [
      'install ok unpacked',
      'install ok half-configured',
      'install reinstreq half-installed',
      'install ok triggers-pending',
      'hold ok half-configured',
    ]) {
      expect(halfInstalled(status), status).to.equal(true);
    }
  });

  // An upgrade cut short (an `apt upgrade` interrupted) leaves a package configured before in one
  // of these states: the machine's own server, which setup installed again and then stopped and
  // kept from starting at boot.
  it('reads a package configured before as the machine’s own, whatever its state', () => {
    for (const status of [
      'install ok triggers-pending',
      'install ok triggers-awaited',
      'install ok half-configured',
      'install ok unpacked',
    ]) {
      expect(halfInstalled(status, '16.4-1'), status).to.equal(false);
    }
  });

  // The `postgresql` package depends on postgresql-<major>, which holds the server: an install
  // cut short can leave that one unpacked while the first is not installed yet.
  it('reads a pattern’s packages as half installed when any one of them is', () => {
    const any = (statuses: string) => {
      const run = spawnSync(
        'bash',
        ['-c', 'source scripts/lib/dpkg-status.sh && any_status_half_installed "$0"', statuses],
        { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      if (run.status !== 0 && run.status !== 1)
        throw new Error(`bash exited ${run.status}: ${run.stderr.toString()}`);
      return run.status === 0;
    };
    expect(any('unknown ok not-installed\ninstall ok unpacked\ninstall ok half-installed')).to.equal(true);
    // One installed, or configured before: the machine's own server, beside a package an upgrade
    // cut short pulled in (a new major version, never configured).
    expect(any('unknown ok not-installed\ninstall ok unpacked\ninstall ok installed')).to.equal(false);
    expect(any('install ok unpacked\ninstall ok triggers-pending 15.8-0')).to.equal(false);
    expect(any('install ok installed\ninstall ok installed')).to.equal(false);
    expect(any('')).to.equal(false);
  });

  // With `postgresql*` alone, an extension's or a client's install left unfinished (the system's
  // own PostgreSQL, say) had every run install again and stop that system's service.
  it('reads the PostgreSQL server’s packages as half installed, and no other of the pattern’s', () => {
    const folder = mkdtempSync(join(tmpdir(), 'dpkg-query-'));
    try {
      const listed = (lines: string[]) => {
        writeFileSync(
          join(folder, 'dpkg-query'),
          `#!/bin/sh\nprintf '%s\\n' ${lines.map((line) => `'${line}'`).join(' ')}\n`,
        );
        chmodSync(join(folder, 'dpkg-query'), 0o755);
        const run = spawnSync(
          'bash',
          [
            '-c',
            `source scripts/lib/dpkg-status.sh && dpkg_half_installed 'postgresql*' '^postgresql(-[0-9]+)?$'`,
          ],
          {
            cwd: repoRoot,
            env: { PATH: `${folder}:${process.env.PATH}` },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        if (run.status !== 0 && run.status !== 1)
          throw new Error(`bash exited ${run.status}: ${run.stderr.toString()}`);
        return run.status === 0;
      };
      expect(listed(['postgresql unknown ok not-installed ', 'postgresql-16 install ok unpacked '])).to.equal(
        true,
      );
      expect(
        listed(['postgresql install ok half-configured ', 'postgresql-16 install ok unpacked ']),
      ).to.equal(true);
      expect(
        listed(['postgresql install ok installed 16+257', 'postgresql-17 install ok unpacked ']),
        'a new major version beside the machine’s own',
      ).to.equal(false);
      expect(
        listed([
          'postgresql install ok installed 16+257',
          'postgresql-16 install ok triggers-pending 16.4-1',
        ]),
      ).to.equal(false);
      expect(
        listed([
          'postgresql install ok installed 16+257',
          'postgresql-16 install ok installed 16.4-1',
          'postgresql-16-postgis-3 install ok half-installed ',
          'postgresql-client-16 install ok unpacked ',
        ]),
      ).to.equal(false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
