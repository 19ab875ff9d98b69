import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { repoRoot } from '../support/run-script.ts';
import { proseLines } from '../support/markdown.ts';
import { readRepositoryFile, repositoryFiles } from '../support/repository-files.ts';

const toRepoPath = (path: string) => normalize(path).split('\\').join('/');

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(markdownPath: string): Set<string> {
  let anchors = anchorCache.get(markdownPath);
  if (!anchors) {
    anchors = new Set();
    const seen = new Map<string, number>();
    for (const { line } of proseLines(readRepositoryFile(markdownPath))) {
      const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
      if (heading === undefined) continue;
      const base = slug(heading);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    anchorCache.set(markdownPath, anchors);
  }
  return anchors;
}

/** Why `target` (repository-relative, optionally with #anchor) cannot be followed, or undefined. */
function brokenBecause(target: string): string | undefined {
  const [path = '', anchor] = target.split('#');
  if (!existsSync(join(repoRoot, path))) return 'no such path in the repository';
  if (anchor && path.endsWith('.md') && !anchorsOf(path).has(anchor)) return `no heading #${anchor}`;
  return undefined;
}

const markdownFiles = () => repositoryFiles().filter((file) => file.endsWith('.md'));
const sourceFiles = () =>
  repositoryFiles().filter((file) => /\.(ts|js|json|sh)$/.test(file) || file === '.prettierignore');

describe('references stay inside the repository', () => {
  it('every relative link of a markdown file leads to a path (and heading) that exists', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles()) {
      for (const { line, number } of proseLines(readRepositoryFile(file))) {
        for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const href = match[1] ?? '';
          if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:
          const target = href.startsWith('#') ? `${file}${href}` : toRepoPath(join(dirname(file), href));
          checked += 1;
          const why = brokenBecause(target);
          if (why) broken.push(`${file}:${number}: ${href}: ${why}`);
        }
      }
    }
    expect(checked, 'links checked').to.be.greaterThan(50);
    expect(broken).to.deep.equal([]);
  });

  it('every docs/... reference in code, comments and configuration names a page (and heading) that exists', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of sourceFiles()) {
      readRepositoryFile(file)
        .split('\n')
        .forEach((line, index) => {
          for (const match of line.matchAll(/\bdocs\/[\w./-]*\.md(?:#[\w-]+)?/g)) {
            checked += 1;
            const why = brokenBecause(match[0]);
            if (why) broken.push(`${file}:${index + 1}: ${match[0]}: ${why}`);
          }
        });
    }
    expect(checked, 'references checked').to.be.greaterThan(50);
    expect(broken).to.deep.equal([]);
  });

  it('nothing cites a document outside the repository or an internal issue number', () => {
    const outsideReferences = [
      /DESIGN\.md/,
      /platform document/i,
      /\bspec\/[\w-]+\.md/,
      /\bevents\.md\b/,
      /messages-en\.md/,
      /platform-interface\.md/,
      /\bissue \d+/i,
      /\/work\//,
    ];
    const found: string[] = [];
    for (const file of [...markdownFiles(), ...sourceFiles()]) {
      if (file === 'test/repository/references.test.ts') continue;
      readRepositoryFile(file)
        .split('\n')
        .forEach((line, index) => {
          const hit = outsideReferences.find((pattern) => pattern.test(line));
          if (hit) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 100)}`);
        });
    }
    expect(found).to.deep.equal([]);
  });
});
