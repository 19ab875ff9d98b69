import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogueError } from '../../../shared/errors/catalogue-error.ts';
import { displayPath, readCatalogueDir } from '../../../tray-service/messages/read-catalogue-dir.ts';

describe('readCatalogueDir', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'catalogues-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, content: unknown) =>
    writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));

  it('reads <locale>.json files, skipping notes, dot files and other extensions', () => {
    write('fr.json', { _note: 'for translators', 'post.community.1': '{{actor1}} a publié' });
    write('.fr.json', 'not read');
    write('de.txt', 'not read');
    write('README.json.bak', 'not read');
    const { catalogues, problems } = readCatalogueDir(dir, 'TRAY_MESSAGES_DIR');
    expect(problems).to.deep.equal([]);
    expect(
      catalogues.map((catalogue) => [catalogue.locale, [...catalogue.messages], catalogue.variable]),
    ).to.deep.equal([['fr', [['post.community.1', '{{actor1}} a publié']], 'TRAY_MESSAGES_DIR']]);
  });

  it('names the file, the key and the variable of each problem', () => {
    write('not a locale!.json', {});
    write('FR.json', {});
    write('fr.json', {});
    write('es.json', '[]');
    write('ja.json', 'null');
    write('ru.json', '"text"');
    write('th.json', '{"post.community.1": 5, "post.community.typo": "x"}');
    write('de.json', '{');
    const { catalogues, problems } = readCatalogueDir(dir, 'TRAY_MESSAGES_DIR');
    const file = (name: string) => displayPath(join(dir, name));
    const at = (name: string, message: string, key?: string) => ({
      file: file(name),
      message,
      ...(key === undefined ? {} : { key }),
      variable: 'TRAY_MESSAGES_DIR',
    });
    expect(
      problems.map((problem) =>
        problem.file === file('de.json') ? { ...problem, message: problem.message.slice(0, 15) } : problem,
      ),
    ).to.deep.equal([
      at('de.json', 'not valid JSON:'),
      at('es.json', 'expected a JSON object of "message key": "template"'),
      at('fr.json', `a second catalogue of fr (the first is ${file('FR.json')})`),
      at('ja.json', 'expected a JSON object of "message key": "template"'),
      at('not a locale!.json', 'the file name must be a BCP 47 locale, e.g. fr.json or pt-BR.json'),
      at('ru.json', 'expected a JSON object of "message key": "template"'),
      at('th.json', 'expected a text template', 'post.community.1'),
      at(
        'th.json',
        'unknown message key (docs/messages.md#catalogue-format lists them)',
        'post.community.typo',
      ),
    ]);
    expect(catalogues.map((catalogue) => catalogue.locale)).to.deep.equal(['fr', 'th']);
  });

  // JSON.parse keeps the last copy of a key: a translator's fix to the first never showed, and
  // start-up and messages:check both passed.
  it('names a message key the file gives more than once, and only top-level keys', () => {
    write(
      'fr.json',
      '{"post.community.1": "old {{actor1}}", "_note": {"post.community.1": "a note"},\n' +
        ' "post.community.\\u0031": "escaped", "post.community.2": "x", "post.community.1": "{{actor1}} a publié"}',
    );
    const { problems } = readCatalogueDir(dir, 'TRAY_MESSAGES_DIR');
    expect(problems).to.deep.equal([
      {
        file: displayPath(join(dir, 'fr.json')),
        key: 'post.community.1',
        message: 'given more than once: only the last is used (remove the other copies)',
        variable: 'TRAY_MESSAGES_DIR',
      },
    ]);
  });

  // Reading was outside the try: start-up threw a bare EISDIR naming no file and no variable, and
  // stopped at the first unreadable entry.
  it('reports an entry it cannot read as a problem of that file, and reads the others', () => {
    mkdirSync(join(dir, 'xx.json'));
    symlinkSync(join(dir, 'missing.json'), join(dir, 'yy.json'));
    write('zz.json', { 'post.community.1': '{{actor1}}' });
    const { catalogues, problems } = readCatalogueDir(dir, 'TRAY_MESSAGES_DIR');
    expect(new CatalogueError(problems).message).to.equal(
      'Invalid tray message catalogues: ' +
        `TRAY_MESSAGES_DIR: ${displayPath(join(dir, 'xx.json'))}: cannot read the file (EISDIR: ` +
        'illegal operation on a directory, read); ' +
        `TRAY_MESSAGES_DIR: ${displayPath(join(dir, 'yy.json'))}: cannot read the file (ENOENT: ` +
        `no such file or directory, open '${join(dir, 'yy.json')}')`,
    );
    expect(catalogues.map((catalogue) => catalogue.locale)).to.deep.equal(['zz']);
  });

  it('reports a path that is not a directory, without a variable when none was given', () => {
    write('en.json', {});
    expect(readCatalogueDir(join(dir, 'en.json')).problems).to.deep.equal([
      {
        file: displayPath(join(dir, 'en.json')),
        message: 'cannot read the catalogue directory (not a directory)',
      },
    ]);
    const missing = readCatalogueDir(join(dir, 'missing')).problems;
    expect(missing).to.have.lengthOf(1);
    expect(missing[0]?.message).to.match(/^cannot read the catalogue directory \(ENOENT/);
  });
});

describe('displayPath', () => {
  it('shows a path inside the working directory relative to it, any other path as given', () => {
    expect(displayPath(join(process.cwd(), 'tray-service', 'messages'))).to.equal(
      join('tray-service', 'messages'),
    );
    expect(displayPath(process.cwd())).to.equal(process.cwd());
    expect(displayPath('/elsewhere/fr.json')).to.equal('/elsewhere/fr.json');
    const sibling = join(process.cwd(), '..', 'x.json');
    expect(displayPath(sibling)).to.equal(sibling);
  });
});
