import { expect } from 'chai';
import { proseLines, section, tableRows } from '../support/markdown.ts';
import { readRepositoryFile, repositoryFiles } from '../support/repository-files.ts';

/** The README's "Documentation" table is the way into docs/: it lists every page there, and only those. */
describe("README.md's documentation table lists every page of docs/", () => {
  const rows = tableRows(section(proseLines(readRepositoryFile('README.md')), 'Documentation')).map(
    ({ cells, number }) => ({ target: /\]\(([^)#\s]+)/.exec(cells[0] ?? '')?.[1], number }),
  );
  const pages = repositoryFiles('docs').filter((file) => /^docs\/[^/]+\.md$/.test(file));

  it('links every docs/*.md page', () => {
    const listed = new Set(rows.map((row) => row.target));
    const missing = pages
      .filter((page) => !listed.has(page))
      .map((page) => `README.md: ${page} is not in the "Documentation" table`);
    expect(rows.length, 'rows read').to.be.greaterThan(5);
    expect(missing).to.deep.equal([]);
  });

  it('links nothing but docs/*.md pages, each once', () => {
    const seen = new Set<string>();
    const wrong: string[] = [];
    for (const { target, number } of rows) {
      if (target === undefined || !pages.includes(target))
        wrong.push(`README.md:${number}: the row links ${target ?? 'nothing'}, not a page of docs/`);
      else if (seen.has(target)) wrong.push(`README.md:${number}: ${target} is listed twice`);
      if (target !== undefined) seen.add(target);
    }
    expect(wrong).to.deep.equal([]);
  });
});
