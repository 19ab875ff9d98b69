import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../support/run-script.ts';

/**
 * Runs `script` after sourcing scripts/lib/system-services.sh, with `service`, `systemctl` and
 * `update-rc.d` stubs on PATH that log their arguments, as setup.sh's `as_root` runs them.
 */
function withStubs(folder: string, script: string): { calls: string[] } {
  const bin = join(folder, 'bin');
  const log = join(folder, 'calls.log');
  spawnSync('mkdir', ['-p', bin]);
  for (const command of ['service', 'systemctl', 'update-rc.d']) {
    writeFileSync(join(bin, command), `#!/bin/sh\necho "${command} $*" >> '${log}'\n`);
    chmodSync(join(bin, command), 0o755);
  }
  const run = spawnSync(
    'bash',
    [
      '-c',
      `set -euo pipefail; say() { :; }; as_root() { "$@"; }; source scripts/lib/system-services.sh; ${script}`,
    ],
    {
      cwd: repoRoot,
      env: { PATH: `${bin}:${process.env.PATH}`, SERVICES_TO_STOP_DIR: join(folder, 'noted') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (run.status !== 0) throw new Error(`bash exited ${run.status}: ${run.stderr.toString()}`);
  return { calls: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [] };
}

// Debian's packages start their service once apt configures them. A setup run cut short after
// that (Ctrl-C during the install's triggers) never stopped it, and the next run, finding the
// server installed, skipped the block that would have.
describe('scripts/lib/system-services.sh: the system services setup.sh installs are stopped', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'system-services-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('stops a service noted by a run cut short, at the end of the next run, and only once', () => {
    withStubs(folder, 'will_stop_service redis-server');
    const next = withStubs(folder, 'stop_noted_services');
    expect(next.calls).to.deep.equal([
      'service redis-server stop',
      'systemctl disable redis-server',
      'update-rc.d redis-server disable',
    ]);
    const after = withStubs(folder, 'stop_noted_services');
    expect(after.calls, 'the log holds the earlier calls only').to.deep.equal(next.calls);
  });

  // A run that fails before its end (no Go, an old Redis) may have configured a package an earlier
  // run left unpacked: its exit stops the service, and keeps the note for a run that ends well.
  it('on an early exit, stops the noted services and keeps the notes', () => {
    withStubs(folder, 'will_stop_service postgresql');
    expect(withStubs(folder, 'stop_noted_services --keep-notes').calls).to.have.lengthOf(3);
    expect(withStubs(folder, 'stop_noted_services').calls).to.have.lengthOf(6);
    expect(withStubs(folder, 'stop_noted_services').calls).to.have.lengthOf(6);
  });

  it('stops nothing when nothing was noted', () => {
    expect(withStubs(folder, 'stop_noted_services').calls).to.deep.equal([]);
  });
});
