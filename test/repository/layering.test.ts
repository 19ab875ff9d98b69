import { expect } from 'chai';
import { dirname, join, normalize } from 'node:path';
import { readRepositoryFile, repositoryFiles } from '../support/repository-files.ts';

/** Every module a file imports, as written: static imports and re-exports, and dynamic import(). */
function importSpecifiers(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    if (match[1]) specifiers.push(match[1]);
  }
  return specifiers;
}

/** Imports of `from`'s files that resolve into any of `areas` (repository-relative folders). */
function importsInto(from: string, areas: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of repositoryFiles(from).filter((path) => /\.(ts|js)$/.test(path))) {
    for (const specifier of importSpecifiers(readRepositoryFile(file))) {
      if (!specifier.startsWith('.')) continue;
      const target = normalize(join(dirname(file), specifier))
        .split('\\')
        .join('/');
      if (areas.some((area) => target === area || target.startsWith(`${area}/`))) {
        found.push(`${file} imports ${specifier}`);
      }
    }
  }
  return found;
}

describe('layering: shared/ is the floor, the two areas stand on it side by side', () => {
  it('finds the imports it checks (a file of shared/ that imports shared/ code)', () => {
    expect(importsInto('shared', ['shared'])).to.not.be.empty;
  });

  it('no file under shared/ imports from receiver/, tray-service/, scripts/ or examples/', () => {
    expect(importsInto('shared', ['receiver', 'tray-service', 'scripts', 'examples'])).to.deep.equal([]);
  });

  it('receiver/ and tray-service/ never import each other', () => {
    expect(importsInto('receiver', ['tray-service'])).to.deep.equal([]);
    expect(importsInto('tray-service', ['receiver'])).to.deep.equal([]);
  });
});
