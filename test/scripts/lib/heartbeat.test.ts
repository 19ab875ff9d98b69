import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { repoRoot } from '../../support/run-script.ts';

/** Runs `command` under with_heartbeat (beats every second) in bash; its exit status and stderr. */
function beat(command: string): { status: number | null; lines: string[] } {
  const run = spawnSync(
    'bash',
    [
      '-c',
      `say() { printf '[setup] %s\\n' "$*" >&2; }; source scripts/lib/heartbeat.sh; with_heartbeat "doing it" ${command}`,
    ],
    {
      cwd: repoRoot,
      encoding: 'utf8',
      // stdin not a socket: bash sources ~/.bashrc when it looks run by a remote shell daemon.
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HEARTBEAT_SECONDS: '1' },
    },
  );
  return { status: run.status, lines: run.stderr.split('\n').filter(Boolean) };
}

describe('scripts/lib/heartbeat.sh: a long setup step says it is still under way', () => {
  it('says so every interval while the step runs, and no more once it ended', () => {
    const { status, lines } = beat('sleep 3.5');
    expect(status).to.equal(0);
    // A second apart: three within 3.5 s, two if the machine is slow to wake a beat.
    expect(lines.length, lines.join('\n')).to.be.within(2, 3);
    for (const line of lines) expect(line).to.match(/^\[setup\] still doing it \(\d+ s\)$/);
  });

  // The beat's own sleep outlived it, holding the shell's stderr open for up to an interval: a
  // caller reading setup's output to its end (a pipe into tee) waited that long after it exited.
  it('leaves no sleep of its beat running once the step ended', () => {
    const run = spawnSync(
      'bash',
      [
        '-c',
        `say() { :; }; source scripts/lib/heartbeat.sh; with_heartbeat "x" sleep 0.3; sleep 0.2; pgrep -xf "sleep 7" || echo none`,
      ],
      {
        cwd: repoRoot,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '', HEARTBEAT_SECONDS: '7' },
      },
    );
    expect(run.stdout.trim()).to.equal('none');
  });

  it('returns the status of a step that fails, and stops beating', () => {
    const { status, lines } = beat('bash -c "exit 7"');
    expect(status).to.equal(7);
    expect(lines).to.deep.equal([]);
  });
});
