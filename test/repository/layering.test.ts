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

/** Imports of `from`'s files of packages (not relative paths) whose name is one of `packages`. */
function packageImports(from: string, packages: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of repositoryFiles(from).filter((path) => /\.(ts|js)$/.test(path))) {
    for (const specifier of importSpecifiers(readRepositoryFile(file))) {
      const name = specifier.replace(/^node:/, '').split('/')[0];
      if (!specifier.startsWith('.') && name !== undefined && packages.includes(name)) {
        found.push(`${file} imports ${specifier}`);
      }
    }
  }
  return found;
}

describe('layering: the tray service stands domain, use cases, then adapters (docs/storage.md)', () => {
  /** Engines, HTTP and queue packages: what only an adapter may speak. */
  const adapterPackages = ['express', 'bull', 'ioredis', 'pg', 'mongodb', 'supertest'];
  const adapters = [
    'tray-service/api',
    'tray-service/live',
    'tray-service/admin',
    'tray-service/demo',
    'tray-service/worker',
    'tray-service/main.ts',
  ];

  it('finds the imports it checks (use cases import the domain and the port)', () => {
    expect(importsInto('tray-service/use-cases', ['tray-service/domain'])).to.not.be.empty;
    expect(importsInto('tray-service/use-cases', ['tray-service/storage/port.ts'])).to.not.be.empty;
  });

  it('domain/ imports no use case, storage, adapter, HTTP, queue or database code', () => {
    expect(
      importsInto('tray-service/domain', ['tray-service/use-cases', 'tray-service/storage', ...adapters]),
    ).to.deep.equal([]);
    expect(packageImports('tray-service/domain', adapterPackages)).to.deep.equal([]);
  });

  it('use-cases/ import the domain and the storage port only: no adapter, engine, HTTP or queue code', () => {
    const storageBelowPort = repositoryFiles('tray-service/storage').filter(
      (path) => path !== 'tray-service/storage/port.ts',
    );
    expect(importsInto('tray-service/use-cases', [...adapters, ...storageBelowPort])).to.deep.equal([]);
    expect(packageImports('tray-service/use-cases', adapterPackages)).to.deep.equal([]);
  });

  it('storage/ never imports the transports (api, live, admin, demo, worker) or the use cases', () => {
    expect(
      importsInto('tray-service/storage', [
        'tray-service/api',
        'tray-service/live',
        'tray-service/admin',
        'tray-service/demo',
        'tray-service/worker',
        'tray-service/use-cases',
      ]),
    ).to.deep.equal([]);
  });

  const transports = ['api', 'live', 'admin', 'demo', 'worker'].map((name) => `tray-service/${name}`);

  it('the transports (api, live, admin, demo, worker) never import each other: what they share is in http/', () => {
    const across = transports.flatMap((transport) =>
      importsInto(
        transport,
        transports.filter((other) => other !== transport),
      ),
    );
    expect(across).to.deep.equal([]);
    expect(importsInto('tray-service/live', ['tray-service/http'])).to.not.be.empty;
  });

  it('http/ (the HTTP pieces the transports share) imports no transport', () => {
    expect(importsInto('tray-service/http', [...transports, 'tray-service/main.ts'])).to.deep.equal([]);
  });
});

/**
 * Every file `start`'s files reach through relative imports, `start`'s own included: what an
 * adapter runs, whichever shared module it goes through.
 */
function reachableFiles(start: string): string[] {
  const reached = new Set<string>();
  const pending = repositoryFiles(start).filter((path) => /\.(ts|js)$/.test(path));
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (reached.has(file)) continue;
    reached.add(file);
    for (const specifier of importSpecifiers(readRepositoryFile(file))) {
      if (!specifier.startsWith('.')) continue;
      pending.push(
        normalize(join(dirname(file), specifier))
          .split('\\')
          .join('/'),
      );
    }
  }
  return [...reached].sort();
}

describe('layering: each storage adapter speaks its own engine only', () => {
  const mongoAdapter = 'tray-service/storage/mongodb';
  const postgresAdapter = 'tray-service/storage/postgres';

  it('finds the code it checks (the MongoDB adapter reaches shared/ and the mongodb driver)', () => {
    const reached = reachableFiles(mongoAdapter);
    expect(reached.filter((file) => file.startsWith('shared/'))).to.not.be.empty;
    expect(packageImportsOf(reached, ['mongodb'])).to.not.be.empty;
  });

  it('the MongoDB adapter reaches no PostgreSQL code: neither `pg` nor storage/postgres/, also through shared/', () => {
    const reached = reachableFiles(mongoAdapter);
    expect(reached.filter((file) => file.startsWith(`${postgresAdapter}/`))).to.deep.equal([]);
    expect(packageImportsOf(reached, ['pg', 'pg-pool', 'pg-cursor'])).to.deep.equal([]);
  });

  it('the PostgreSQL adapter reaches no MongoDB code: neither the driver nor storage/mongodb/', () => {
    const reached = reachableFiles(postgresAdapter);
    expect(reached.filter((file) => file.startsWith(`${mongoAdapter}/`))).to.deep.equal([]);
    expect(packageImportsOf(reached, ['mongodb'])).to.deep.equal([]);
  });
});

/** Imports of packages named `packages` in the given files. */
function packageImportsOf(files: readonly string[], packages: readonly string[]): string[] {
  return files.flatMap((file) =>
    importSpecifiers(readRepositoryFile(file))
      .filter((specifier) => !specifier.startsWith('.') && packages.includes(specifier.split('/')[0] ?? ''))
      .map((specifier) => `${file} imports ${specifier}`),
  );
}
