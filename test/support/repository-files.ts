import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './run-script.ts';

/** Folders that are not the project's own text: installed packages, local data, tools, git. */
const outside = new Set(['node_modules', '.data', '.tools', '.git']);

/** Every file of the repository as a path relative to its root, with `/` separators. */
export function repositoryFiles(under = ''): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (outside.has(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) files.push(relative(repoRoot, path).split('\\').join('/'));
    }
  };
  walk(join(repoRoot, under));
  return files.sort();
}

export function readRepositoryFile(path: string): string {
  return readFileSync(join(repoRoot, path), 'utf8');
}
