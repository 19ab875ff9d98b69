import { expect } from 'chai';
import { errorCodes } from '../../shared/errors/app-error.ts';
import { proseLines, section, tableRows } from '../support/markdown.ts';
import { readRepositoryFile } from '../support/repository-files.ts';

/**
 * docs/contract.md's table of error codes against `errorCodes`, the one list the services answer
 * from: every code is in the table with its HTTP status, and the table lists no other.
 */

const page = 'docs/contract.md';

interface DocumentedCode {
  status: number;
  code: number;
  number: number;
}

function documentedCodes(): DocumentedCode[] {
  return tableRows(section(proseLines(readRepositoryFile(page)), 'Errors'))
    .filter((row) => /^\d{3}$/.test(row.cells[0] ?? '') && /^\d{6}$/.test(row.cells[1] ?? ''))
    .map(({ cells, number }) => ({ status: Number(cells[0]), code: Number(cells[1]), number }));
}

describe(`${page}: the table of error codes matches shared/errors/app-error.ts`, () => {
  const documented = documentedCodes();
  const defined = Object.entries(errorCodes).map(([kind, { status, code }]) => ({ kind, status, code }));

  it('reads the table', () => {
    expect(documented.length, 'codes found under "Errors"').to.be.greaterThan(10);
  });

  it('lists every code the services answer with, with its HTTP status', () => {
    const wrong: string[] = [];
    for (const { kind, status, code } of defined) {
      const rows = documented.filter((row) => row.code === code);
      if (rows.length === 0)
        wrong.push(`${page}: code ${code} (${kind}, HTTP ${status}) is not in the table`);
      for (const row of rows)
        if (row.status !== status)
          wrong.push(
            `${page}:${row.number}: code ${code} is listed with HTTP ${row.status}, but ${kind} answers ${status}`,
          );
    }
    expect(wrong).to.deep.equal([]);
  });

  it('lists no code the services do not have, and each once', () => {
    const wrong: string[] = [];
    const seen = new Set<number>();
    for (const { code, number } of documented) {
      if (!defined.some((entry) => entry.code === code))
        wrong.push(`${page}:${number}: code ${code} is not in errorCodes (shared/errors/app-error.ts)`);
      if (seen.has(code)) wrong.push(`${page}:${number}: code ${code} is listed twice`);
      seen.add(code);
    }
    expect(wrong).to.deep.equal([]);
  });
});
