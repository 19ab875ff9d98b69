import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cleanEnv, repoRoot } from '../../support/run-script.ts';

const cli = resolve(import.meta.dirname, '../../../scripts/lib/cli.ts');
const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';

/**
 * Runs `code` (an ES module that may import the cli helpers from CLI) under a pseudo-terminal, as
 * an operator's terminal runs a tool: the progress bar draws only on one. Answers what the
 * terminal received and how the process ended (Python's waitstatus_to_exitcode: -2 for SIGINT).
 */
function inTerminal(code: string): { output: string; exit: number } {
  const python = [
    'import os, pty, sys',
    'status = pty.spawn(sys.argv[1:])',
    'sys.stdout.write("\\nEXIT %d\\n" % os.waitstatus_to_exitcode(status))',
  ].join('\n');
  const run = spawnSync(
    'python3',
    [
      '-c',
      python,
      process.execPath,
      '--input-type=module',
      '-e',
      code.replaceAll('CLI', JSON.stringify(cli)),
    ],
    { encoding: 'utf8', env: cleanEnv(), timeout: 20_000 },
  );
  const exit = /\nEXIT (-?\d+)\n$/.exec(run.stdout)?.[1];
  if (exit === undefined) throw new Error(`no exit status: ${run.stdout} ${run.stderr}`);
  return { output: run.stdout, exit: Number(exit) };
}

// The bar hides the terminal's cursor while it draws; Ctrl-C ended the tool with the cursor still
// hidden, and the operator's shell went on without one.
describe('progressBar (scripts/lib/cli.ts) under a terminal', () => {
  for (const [signal, exit] of [
    ['SIGINT', -2],
    ['SIGTERM', -15],
  ] as const) {
    it(`shows the cursor again on ${signal}, then ends by the signal as before`, () => {
      const { output, exit: ended } = inTerminal(`
        const { progressBar } = await import(CLI);
        const bar = progressBar('working', 'items');
        bar.start(100, 1);
        setTimeout(() => process.kill(process.pid, '${signal}'), 300);
        setInterval(() => undefined, 1_000);
      `);
      expect(output).to.include(HIDE_CURSOR);
      expect(output.lastIndexOf(SHOW_CURSOR), 'the cursor shown after it was hidden').to.be.above(
        output.indexOf(HIDE_CURSOR),
      );
      expect(ended).to.equal(exit);
    });
  }

  it('leaves the signal to a tool that handles it itself (its clean-up runs, its exit code stands)', () => {
    const { output, exit } = inTerminal(`
      const { progressBar } = await import(CLI);
      process.once('SIGINT', () => setTimeout(() => { process.stdout.write('cleaned up'); process.exit(130); }, 200));
      const bar = progressBar('working', 'items');
      bar.start(100, 1);
      setTimeout(() => process.kill(process.pid, 'SIGINT'), 300);
      setInterval(() => undefined, 1_000);
    `);
    expect(output).to.include('cleaned up');
    expect(output.lastIndexOf(SHOW_CURSOR)).to.be.above(output.indexOf(HIDE_CURSOR));
    expect(exit).to.equal(130);
  });
});

// A long import, export or replay run by a scheduled job (stderr a pipe or a log file) showed
// nothing until its summary: no telling a slow run from a stuck one.
describe('progressBar (scripts/lib/cli.ts) without a terminal', () => {
  it('writes its progress as plain lines: at the start, every interval and at the end', () => {
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
        const { progressBar } = await import(${JSON.stringify(cli)});
        const bar = progressBar('working', 'items', { lineEveryMs: 100 });
        bar.start(100, 1);
        setTimeout(() => bar.update(40), 50);
        setTimeout(() => { bar.update(100); bar.stop(); }, 400);
        `,
      ],
      { encoding: 'utf8', env: cleanEnv(), timeout: 20_000 },
    );
    expect(run.status, run.stderr).to.equal(0);
    const lines = run.stderr.split('\n').filter((line) => line !== '');
    expect(lines[0]).to.match(/^working: 1% \| 1\/100 items/);
    expect(lines, 'a line each interval').to.satisfy((all: string[]) =>
      all.some((line) => line.startsWith('working: 40% | 40/100 items')),
    );
    expect(lines.at(-1)).to.match(/^working: 100% \| 100\/100 items/);
    expect(run.stderr, 'no terminal control codes').to.not.include('\u001b');
    expect(run.stderr, 'no blank line').to.not.include('\n\n');
  });
});

describe('commandLinePath', () => {
  /** commandLinePath(path) as a tool run in `cwd` with `env` answers it. */
  const resolvedIn = (cwd: string, env: NodeJS.ProcessEnv, path: string) =>
    spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { commandLinePath } from ${JSON.stringify(cli)}; process.stdout.write(commandLinePath(${JSON.stringify(path)}));`,
      ],
      { cwd, env: cleanEnv(env), encoding: 'utf8' },
    ).stdout;

  it('reads a path from the folder `npm run` was typed in, when npm ran the tool at the root', () => {
    expect(resolvedIn(repoRoot, { npm_lifecycle_event: 'replay', INIT_CWD: '/srv/ops' }, 'spool')).to.equal(
      '/srv/ops/spool',
    );
    expect(resolvedIn(repoRoot, {}, 'spool')).to.equal(join(repoRoot, 'spool'));
  });

  // INIT_CWD passes to every child of npm: a script of the user's that changed folder first meant
  // that folder.
  it('reads it from the working directory when that is not the root, INIT_CWD or not', () => {
    expect(resolvedIn(tmpdir(), { npm_lifecycle_event: 'ops', INIT_CWD: '/srv/ops' }, 'spool')).to.equal(
      join(realpathSync(tmpdir()), 'spool'),
    );
    expect(
      resolvedIn(repoRoot, { npm_lifecycle_event: 'replay', INIT_CWD: '/srv/ops' }, '/abs/spool'),
    ).to.equal('/abs/spool');
  });
});

// Every failure to look at a path read "no such file": a folder the operator may not search, or
// a path through a file, was reported missing, and the operator looked for the wrong fault.
describe('statOperand', () => {
  it('names why a path cannot be read, and answers what it names otherwise', async () => {
    const { statOperand } = await import('../../../scripts/lib/cli.ts');
    const { UsageError } = await import('../../../shared/errors/usage-error.ts');
    const dir = mkdtempSync(join(tmpdir(), 'stat-operand-'));
    try {
      const file = join(dir, 'members.csv');
      writeFileSync(file, 'communityId,userId\n');
      expect(statOperand(file).isFile()).to.equal(true);
      expect(statOperand(dir).isDirectory()).to.equal(true);
      const why = (path: string) => {
        try {
          statOperand(path);
        } catch (error) {
          expect(error).to.be.instanceOf(UsageError);
          return (error as Error).message;
        }
        return 'read';
      };
      expect(why(join(dir, 'nope.csv'))).to.equal(`cannot read ${join(dir, 'nope.csv')}: no such file`);
      expect(why(join(file, 'x'))).to.equal(
        `cannot read ${join(file, 'x')}: a part of the path is a file, not a folder`,
      );
      symlinkSync(join(dir, 'loop'), join(dir, 'loop'));
      expect(why(join(dir, 'loop'))).to.equal(`cannot read ${join(dir, 'loop')}: too many symbolic links`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
