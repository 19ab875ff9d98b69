import { expect } from 'chai';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { seedRecords } from '../support/seed-tray.ts';
import { repoRoot } from '../support/run-script.ts';
import { tokenFor } from '../tray-service/api/support/api-harness.ts';
import { useServedTrayApi } from './support/serve-tray-api.ts';

const run = promisify(execFile);
const clientDir = resolve(repoRoot, 'client');
const tscScript = resolve(repoRoot, 'node_modules/typescript/bin/tsc');
/** The repository's TypeScript compiler, on the pinned Node. */
const tsc = (args: string[], cwd = repoRoot) => run(process.execPath, [tscScript, ...args], { cwd });

/** What an app of its own, in TypeScript, writes against the package. */
const typedUse = `
import { createTrayClient, TrayApiError, type NotificationRecord, type TrayClient } from '@webhook-tray-kit/client';

const tray: TrayClient = createTrayClient({ baseUrl: 'https://tray.example.org', getToken: async () => 'token' });
export const unread: number = (await tray.counts()).totalUnreadCount;
export const newest: NotificationRecord | undefined = (await tray.historyPage()).data[0];
export const code = (error: unknown): number | undefined => (error instanceof TrayApiError ? error.code : undefined);
`;

/** A call the types must refuse: a verb the service does not know. */
const wrongUse = `
import { createTrayClient } from '@webhook-tray-kit/client';
await createTrayClient({ baseUrl: 'https://tray.example.org', getToken: () => 'token' }).read('like', 't1');
`;

const compilerOptions = {
  target: 'ES2024',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  strict: true,
  noEmit: true,
  // The package's own .d.ts files are checked too.
  skipLibCheck: false,
};

describe('the client package (client/package.json)', () => {
  // Packing builds dist (prepack) with the TypeScript it names; the repository's own compiler
  // builds and tests it, so the two must be the same.
  it('names the TypeScript the repository builds it with', () => {
    const versionOf = (file: string) =>
      (
        JSON.parse(readFileSync(resolve(repoRoot, file), 'utf8')) as {
          devDependencies?: Record<string, string>;
        }
      ).devDependencies?.typescript;
    expect(versionOf('client/package.json')).to.be.a('string').and.equal(versionOf('package.json'));
  });
});

describe('the client package (client/package.json) packed and installed into an empty project', function () {
  this.timeout(180_000);
  const api = useServedTrayApi();
  let dir = '';
  let app = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tray-client-pack-'));
    app = join(dir, 'app');
    mkdirSync(app);
    // Built and packed from a copy of its sources: building into client/dist itself emptied each
    // file for a moment while tray services started beside this suite read them (the demo page).
    const copy = join(dir, 'client');
    for (const part of ['package.json', 'tsconfig.json', 'LICENSE', 'README.md', 'scripts', 'src'])
      cpSync(join(clientDir, part), join(copy, part), { recursive: true });
    // Nothing built beforehand: `npm pack` builds dist itself (prepack), as a publish from a fresh
    // clone must, with the repository's compiler.
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: copy,
      env: { ...process.env, PATH: `${resolve(repoRoot, 'node_modules/.bin')}:${process.env.PATH ?? ''}` },
    });
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    await run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, filename)],
      {
        cwd: app,
      },
    );
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const installed = () => join(app, 'node_modules/@webhook-tray-kit/client');

  it('carries its licence, and declarations whose imports name the .js files it ships', () => {
    const manifest = JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(manifest).to.include({ license: 'MIT', sideEffects: false });
    expect(readFileSync(join(installed(), 'LICENSE'), 'utf8')).to.match(/^MIT License/);
    // tsc rewrites the .ts extensions of relative imports in the JavaScript only: declarations
    // naming ./x.ts files the package does not ship trip tools other than tsc (editors, bundlers).
    const declarations = readdirSync(join(installed(), 'dist'), { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.d.ts'),
    );
    expect(declarations).to.include('index.d.ts');
    for (const file of declarations) {
      const text = readFileSync(join(installed(), 'dist', file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from\s*|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map(
        (match) => match[1]!,
      );
      for (const specifier of specifiers) {
        expect(specifier, `${file} imports ${specifier}`).to.match(/\.js$/);
        expect(
          existsSync(join(installed(), 'dist', file, '..', specifier)),
          `${file}: ${specifier}`,
        ).to.equal(true);
      }
    }
  });

  it('imports from plain JavaScript and calls the service', async () => {
    await seedRecords(api.harness.storage, [{ userId: 'packed-user', targetId: 'packed-1' }]);
    writeFileSync(
      join(app, 'main.js'),
      `import { createTrayClient, TrayApiError } from '@webhook-tray-kit/client';
const tray = createTrayClient({ baseUrl: process.env.TRAY_URL, getToken: () => process.env.TOKEN });
const refused = await tray.read('post', 'none').catch((error) => error instanceof TrayApiError && error.code);
const page = await tray.historyPage();
console.log(JSON.stringify({ counts: await tray.counts(), targets: page.data.map((r) => r.targetId), refused }));
`,
    );
    const { stdout } = await run(process.execPath, ['main.js'], {
      cwd: app,
      env: { PATH: process.env.PATH, TRAY_URL: api.baseUrl, TOKEN: await tokenFor('packed-user') },
    });
    expect(JSON.parse(stdout)).to.deep.equal({
      counts: { totalUnreadCount: 1, totalUnseenCount: 1 },
      targets: ['packed-1'],
      refused: 404000,
    });
  });

  it('loads with require() from CommonJS too (Node 24 requires an ES module without top-level await)', async () => {
    writeFileSync(
      join(app, 'main.cjs'),
      `const { createTrayClient, TrayApiError } = require('@webhook-tray-kit/client');
console.log(JSON.stringify([typeof createTrayClient, typeof TrayApiError]));
`,
    );
    const { stdout } = await run(process.execPath, ['main.cjs'], {
      cwd: app,
      env: { PATH: process.env.PATH },
    });
    expect(JSON.parse(stdout)).to.deep.equal(['function', 'function']);
  });

  for (const [environment, options] of [
    ['a browser (DOM types)', { lib: ['ES2024', 'DOM'], types: [] }],
    [
      'Node (@types/node)',
      { lib: ['ES2024'], types: ['node'], typeRoots: [resolve(repoRoot, 'node_modules/@types')] },
    ],
  ] as const) {
    it(`type-checks from TypeScript with tsc --noEmit, for ${environment}, and refuses a wrong call`, async () => {
      writeFileSync(join(app, 'typed.ts'), typedUse);
      writeFileSync(join(app, 'wrong.ts'), wrongUse);
      const config = (file: string) =>
        JSON.stringify({ compilerOptions: { ...compilerOptions, ...options }, files: [file] });
      writeFileSync(join(app, 'tsconfig.json'), config('typed.ts'));
      writeFileSync(join(app, 'tsconfig.wrong.json'), config('wrong.ts'));

      await tsc(['-p', 'tsconfig.json'], app);
      const wrong = await tsc(['-p', 'tsconfig.wrong.json'], app).then(
        () => 'compiled',
        (error: { stdout: string }) => error.stdout,
      );
      expect(wrong).to.match(/wrong\.ts.*error TS2345: Argument of type '"like"'/);
    });
  }
});
