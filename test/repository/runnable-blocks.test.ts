import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readRepositoryFile, repositoryFiles } from '../support/repository-files.ts';
import { cleanEnv, repoRoot } from '../support/run-script.ts';

/**
 * A fenced block whose info string is `sh runnable` promises that each of its commands runs as
 * written from the repository root, without servers or configuration. Keep such commands cheap
 * (`--help`, checks): the whole suite runs them.
 */
function runnableCommands(file: string): { command: string; line: number }[] {
  const commands: { command: string; line: number }[] = [];
  let inRunnable = false;
  readRepositoryFile(file)
    .split('\n')
    .forEach((text, index) => {
      const fence = /^\s*```(.*)$/.exec(text);
      if (fence) {
        inRunnable = !inRunnable && /^sh\s+runnable\b/.test(fence[1]?.trim() ?? '');
        return;
      }
      const command = text.trim();
      if (inRunnable && command !== '' && !command.startsWith('#'))
        commands.push({ command, line: index + 1 });
    });
  return commands;
}

const documents = ['README.md', ...repositoryFiles('docs').filter((file) => file.endsWith('.md'))];
const blocks = documents.flatMap((file) => runnableCommands(file).map((command) => ({ file, ...command })));

describe('commands in the documentation marked runnable (```sh runnable)', function () {
  this.timeout(60_000);

  it('the README has some', () => {
    expect(blocks.filter((block) => block.file === 'README.md')).to.not.be.empty;
  });

  for (const { file, line, command } of blocks) {
    it(`${file}:${line}: \`${command}\` exits 0`, () => {
      const result = spawnSync('sh', ['-c', command], {
        cwd: repoRoot,
        env: cleanEnv(),
        encoding: 'utf8',
        timeout: 50_000,
      });
      expect(result.status, `${command}\n${result.stdout}\n${result.stderr}`).to.equal(0);
    });
  }
});
