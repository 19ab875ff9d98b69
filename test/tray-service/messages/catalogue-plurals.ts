import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { shippedCataloguesDir } from '../../../tray-service/messages/load-catalogues.ts';

/** The forms of the `{{plural}}` call of a shipped message, by CLDR category (test helper). */
export function pluralFormsOf(locale: string, key: string): Record<string, string> {
  const catalogue = JSON.parse(readFileSync(join(shippedCataloguesDir, `${locale}.json`), 'utf8')) as Record<
    string,
    string
  >;
  const template = catalogue[key];
  if (template === undefined) throw new Error(`${locale}.json has no ${key}`);
  const forms: Record<string, string> = {};
  const visit = (node: {
    type: string;
    path?: { original?: string };
    params?: unknown[];
    hash?: hbs.AST.Hash;
  }) => {
    if (node.path?.original === 'plural') {
      for (const pair of node.hash?.pairs ?? [])
        forms[pair.key] = (pair.value as hbs.AST.StringLiteral).value;
    }
    for (const param of node.params ?? []) visit(param as Parameters<typeof visit>[0]);
  };
  for (const node of Handlebars.parse(template).body) visit(node as Parameters<typeof visit>[0]);
  return forms;
}
