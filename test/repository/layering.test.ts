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

  // Which errors of an engine mean "not now" is its adapter's to say: a list above the adapters
  // (it was in http/) drifted, PostgreSQL's failover codes there, MongoDB's missing.
  it('only storage/ speaks to an engine: no pg or mongodb import anywhere else in the tray service', () => {
    const found = repositoryFiles('tray-service')
      .filter((path) => /\.(ts|js)$/.test(path) && !path.startsWith('tray-service/storage/'))
      .flatMap((file) =>
        importSpecifiers(readRepositoryFile(file))
          .filter(
            (specifier) => specifier === 'pg' || specifier === 'mongodb' || specifier.startsWith('mongodb/'),
          )
          .map((specifier) => `${file} imports ${specifier}`),
      );
    expect(found).to.deep.equal([]);
  });

  it('http/ (the HTTP pieces the transports share) imports no transport', () => {
    expect(importsInto('tray-service/http', [...transports, 'tray-service/main.ts'])).to.deep.equal([]);
  });
});

/** A file's text by repository path, or undefined when there is no such file. */
type ReadSource = (path: string) => string | undefined;

const productFiles = new Set(
  repositoryFiles()
    .filter((path) => /\.(ts|js)$/.test(path))
    .filter((path) => !path.startsWith('test/')),
);
/** The repository's own product files, as on disk. */
const onDisk: ReadSource = (path) => (productFiles.has(path) ? readRepositoryFile(path) : undefined);

/**
 * Every file the `starts` reach through relative imports, the starts included, each with the chain
 * of imports that reaches it (start first): what a layer runs, whichever module it goes through.
 */
function reachable(starts: readonly string[], read: ReadSource = onDisk): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const pending: string[][] = starts.map((start) => [start]);
  while (pending.length > 0) {
    const chain = pending.shift() as string[];
    const file = chain.at(-1) as string;
    const source = read(file);
    if (reached.has(file) || source === undefined) continue;
    reached.set(file, chain);
    for (const specifier of importSpecifiers(source)) {
      if (!specifier.startsWith('.')) continue;
      pending.push([
        ...chain,
        normalize(join(dirname(file), specifier))
          .split('\\')
          .join('/'),
      ]);
    }
  }
  return reached;
}

/** Every file `start` (a folder or a file) reaches: what an adapter runs, whichever shared module it goes through. */
function reachableFiles(start: string): string[] {
  const starts = [...productFiles].filter((path) => path === start || path.startsWith(`${start}/`));
  return [...reachable(starts).keys()].sort();
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

/**
 * Every folder of tray-service/ and shared/ and what it is, lowest floor first. A new folder fails
 * the first test below until it is placed here, so the rules never miss a room.
 */
const floors = {
  /** Pure: events to activities to record changes; no I/O. */
  domain: ['tray-service/domain'],
  /** One operation each, over the domain and the storage port. */
  useCases: ['tray-service/use-cases'],
  /** The port (storage/port.ts) and its two adapters; open-storage.ts chooses one. */
  storage: ['tray-service/storage'],
  /** Libraries of the tray the adapters use: catalogues and rendering, moderation rules and delivery, ban publishing. */
  services: ['tray-service/messages', 'tray-service/moderation', 'tray-service/bans'],
  /** What the HTTP transports share (auth, rate limits, errors, the OpenAPI document). */
  http: ['tray-service/http'],
  /** The bull, Express and SSE adapters over the use cases. */
  transports: [
    'tray-service/api',
    'tray-service/live',
    'tray-service/admin',
    'tray-service/demo',
    'tray-service/worker',
  ],
  /** shared/ without engines: what the domain and the use cases may stand on. */
  sharedPure: [
    'shared/address',
    'shared/arrays',
    'shared/async',
    'shared/errors',
    'shared/text',
    'shared/time',
  ],
  /** shared/ of the running process: configuration, logging, signals. */
  sharedRuntime: ['shared/config', 'shared/logging', 'shared/process'],
  /** shared/ that speaks an engine or a protocol: connections, queue, HTTP. */
  sharedEngines: ['shared/http', 'shared/mongo', 'shared/queue', 'shared/redis'],
} as const;

/** Packages that speak an engine, a protocol or the process: never reached from the domain or the use cases. */
const enginePackages = [
  'express',
  'bull',
  'ioredis',
  'pg',
  'pg-pool',
  'pg-cursor',
  'mongodb',
  'supertest',
  'pino',
  'prom-client',
  'rate-limiter-flexible',
];

const within = (file: string, areas: readonly string[]) =>
  areas.some((area) => file === area || file.startsWith(`${area}/`));

/**
 * What `starts` reach that they may not: a file outside `allowed`, or an engine package imported
 * anywhere on the way; each told with the chain of imports that reaches it.
 */
function violations(
  starts: readonly string[],
  allowed: readonly string[],
  read: ReadSource = onDisk,
): string[] {
  const found: string[] = [];
  for (const [file, chain] of reachable(starts, read)) {
    const route = chain.join(' -> ');
    if (!within(file, allowed)) found.push(route);
    const source = read(file) ?? '';
    for (const specifier of importSpecifiers(source)) {
      const name = specifier.replace(/^node:/, '').split('/')[0] ?? '';
      if (!specifier.startsWith('.') && enginePackages.includes(name)) found.push(`${route} -> ${specifier}`);
    }
  }
  return found;
}

const filesOf = (area: string) => [...productFiles].filter((path) => within(path, [area])).sort();

describe('layering: every room of tray-service/ and shared/ has its floor, and the lowest two hold all the way down', () => {
  const domainMay = [...floors.domain, ...floors.sharedPure];
  const useCasesMay = [
    ...floors.domain,
    ...floors.useCases,
    'tray-service/storage/port.ts',
    ...floors.sharedPure,
  ];

  it('names every folder of tray-service/ and shared/', () => {
    const folders = new Set(
      [...productFiles]
        .filter((path) => path.startsWith('tray-service/') || path.startsWith('shared/'))
        .map((path) => path.split('/').slice(0, 2).join('/'))
        .filter((path) => !/\.(ts|js)$/.test(path)),
    );
    expect([...folders].sort()).to.deep.equal(Object.values(floors).flat().sort());
  });

  it('finds what it follows: the use cases reach the domain and shared/ through it', () => {
    const reached = [...reachable(filesOf('tray-service/use-cases')).keys()];
    expect(reached.filter((file) => within(file, floors.domain))).to.not.be.empty;
    expect(reached.filter((file) => within(file, floors.sharedPure))).to.not.be.empty;
  });

  it('the domain reaches, through any chain of imports, only the domain and engine-free shared/ code', () => {
    expect(violations(filesOf('tray-service/domain'), domainMay)).to.deep.equal([]);
  });

  it('the use cases reach, through any chain of imports, only the domain, the storage port and engine-free shared/ code', () => {
    expect(violations(filesOf('tray-service/use-cases'), useCasesMay)).to.deep.equal([]);
  });

  it('fails on a planted chain domain -> shared -> mongodb that a check of direct imports lets through', () => {
    // Built in memory over the real tree: a domain file importing an engine-free shared helper that
    // itself imports the MongoDB connection.
    const planted = new Map([
      [
        'tray-service/domain/planted-rule.ts',
        "import { helper } from '../../shared/errors/planted-helper.ts';\n",
      ],
      ['shared/errors/planted-helper.ts', "import { connectMongo } from '../mongo/connect-mongo.ts';\n"],
    ]);
    const read: ReadSource = (path) => planted.get(path) ?? onDisk(path);
    const direct = importSpecifiers(read('tray-service/domain/planted-rule.ts') ?? '');
    expect(direct, 'the domain file itself imports only shared/errors').to.deep.equal([
      '../../shared/errors/planted-helper.ts',
    ]);
    const found = violations(['tray-service/domain/planted-rule.ts'], domainMay, read);
    expect(found).to.include(
      'tray-service/domain/planted-rule.ts -> shared/errors/planted-helper.ts -> shared/mongo/connect-mongo.ts',
    );
    expect(found.some((route) => route.endsWith('-> mongodb'))).to.equal(true);
  });
});

describe('layering: the product never imports the tests', () => {
  it('no file of receiver/, tray-service/, shared/, scripts/ or examples/ imports anything under test/', () => {
    for (const area of ['receiver', 'tray-service', 'shared', 'scripts', 'examples'])
      expect(importsInto(area, ['test']), area).to.deep.equal([]);
  });

  it('finds the imports it checks (the tests import the reference model under test/)', () => {
    expect(importsInto('test', ['test/support/reference-tray'])).to.not.be.empty;
  });
});

describe('layering: the client package stands alone (it is published and runs in browsers)', () => {
  const clientFiles = filesOf('client/src');

  it('finds the files it checks', () => {
    expect(clientFiles).to.include('client/src/index.ts');
  });

  it('client/src reaches only client/src, and imports no package (not even node:)', () => {
    const outside = [...reachable(clientFiles).values()]
      .filter((chain) => !within(chain.at(-1) ?? '', ['client/src']))
      .map((chain) => chain.join(' -> '));
    expect(outside).to.deep.equal([]);
    const packages = clientFiles.flatMap((file) =>
      importSpecifiers(readRepositoryFile(file))
        .filter((specifier) => !specifier.startsWith('.'))
        .map((specifier) => `${file} imports ${specifier}`),
    );
    expect(packages).to.deep.equal([]);
  });

  it('nothing of receiver/, tray-service/ or shared/ imports the client’s source', () => {
    for (const area of ['receiver', 'tray-service', 'shared'])
      expect(importsInto(area, ['client']), area).to.deep.equal([]);
  });
});

/**
 * The MongoDB adapter's folders, lowest first: each may import its own folder and those before it,
 * never one after it, so no two folders lean on each other and a reader can start at the bottom.
 * Its two top files (open-mongo-storage.ts, purge-expired.ts) assemble the folders.
 */
const mongoFloors = [
  'driver',
  'collections',
  'setup',
  'compare-and-set',
  'records',
  'locks',
  'block-list',
  'mutes',
  'inbox',
  'events',
  'moderation',
  'memberships',
  'grouping',
  'removals',
  'writes',
];

describe('layering: the MongoDB adapter’s folders stand in one order, lowest first (docs/storage.md)', () => {
  const adapter = 'tray-service/storage/mongodb';
  const folderOf = (file: string) => file.slice(adapter.length + 1).split('/')[0] ?? '';
  const adapterFiles = filesOf(adapter);

  /** Each import from one of the adapter's folders into another, as `from -> to (folder -> folder)`. */
  const crossings = adapterFiles.flatMap((file) =>
    importSpecifiers(readRepositoryFile(file))
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) =>
        normalize(join(dirname(file), specifier))
          .split('\\')
          .join('/'),
      )
      .filter((target) => within(target, [adapter]) && mongoFloors.includes(folderOf(target)))
      .filter((target) => mongoFloors.includes(folderOf(file)) && folderOf(target) !== folderOf(file))
      .map((target) => ({ file, target, from: folderOf(file), to: folderOf(target) })),
  );

  it('names every folder of the adapter', () => {
    const folders = new Set(adapterFiles.map(folderOf).filter((name) => !/\.(ts|js)$/.test(name)));
    expect([...folders].sort()).to.deep.equal([...mongoFloors].sort());
  });

  it('finds the imports it checks (the writes import the removals, the records the compare-and-set)', () => {
    const pairs = crossings.map(({ from, to }) => `${from} -> ${to}`);
    expect(pairs).to.include('writes -> removals');
    expect(pairs).to.include('records -> compare-and-set');
  });

  it('no folder imports a folder above it', () => {
    const upward = crossings
      .filter(({ from, to }) => mongoFloors.indexOf(to) > mongoFloors.indexOf(from))
      .map(({ file, target, from, to }) => `${file} -> ${target} (${from} -> ${to})`);
    expect(upward).to.deep.equal([]);
  });
});
