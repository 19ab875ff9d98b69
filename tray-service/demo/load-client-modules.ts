import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where tsc builds the client package (`npm run build:client`; setup.sh builds it when stale). */
export const clientDistDir = join(import.meta.dirname, '..', '..', 'client', 'dist');

/**
 * The built client's JavaScript files by their path inside dist/ ('stream/index.js'), read once:
 * the demo page imports the very package an app installs instead of a copy of its logic. Empty
 * when the client is not built.
 */
export function loadClientModules(dir = clientDistDir): ReadonlyMap<string, string> {
  if (!existsSync(dir)) return new Map();
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js'))
    .map((file) => file.split('\\').join('/'))
    .sort();
  return new Map(files.map((file) => [file, readFileSync(join(dir, file), 'utf8')]));
}
