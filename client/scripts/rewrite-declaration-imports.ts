// Run after tsc, on the folder it wrote: `node scripts/rewrite-declaration-imports.ts dist`.
//
// tsc's rewriteRelativeImportExtensions turns the sources' `./x.ts` imports into `./x.js` in the
// JavaScript it emits, not in the declarations: they keep naming `./x.ts`, files the package does
// not ship. tsc itself resolves them to the .d.ts beside the .js, but editors, declaration bundlers
// and tools that load a .d.ts as a module do not. Only relative specifiers are rewritten.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const folder = process.argv[2];
if (folder === undefined) {
  process.stderr.write('usage: node rewrite-declaration-imports.ts <folder tsc wrote>\n');
  process.exit(2);
}
const relativeTs = /((?:\bfrom\s*|\bimport\(\s*)(['"]))(\.{1,2}\/[^'"]*)\.ts\2/g;
for (const file of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.d.ts')) continue;
  const path = join(folder, file);
  const text = readFileSync(path, 'utf8');
  const rewritten = text.replace(relativeTs, '$1$3.js$2');
  if (rewritten !== text) writeFileSync(path, rewritten);
}
