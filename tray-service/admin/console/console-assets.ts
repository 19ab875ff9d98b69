import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';

/** One file the console's page loads: its bytes and its media type. */
export interface ConsoleAsset {
  type: 'text/javascript' | 'text/css';
  body: string;
}

const TYPES: Record<string, ConsoleAsset['type']> = { '.js': 'text/javascript', '.css': 'text/css' };

/**
 * The chart library's browser files, served from the installed package (no CDN: the page's
 * Content-Security-Policy allows its own origin only). Named as the package names them.
 */
const VENDOR_FILES = ['uPlot.esm.js', 'uPlot.min.css'];

/**
 * Every asset by the name it is served under: the console's own scripts and style sheet
 * (assets/, plain ES modules with no build step) and uPlot's. Read once at start-up, so a
 * request can only ever name one of these: nothing of the file system is reachable through a URL.
 */
export function loadConsoleAssets(): ReadonlyMap<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  const add = (name: string, path: string) => {
    const type = TYPES[extname(name)];
    if (type !== undefined) assets.set(name, { type, body: readFileSync(path, 'utf8') });
  };
  const own = join(import.meta.dirname, 'assets');
  for (const name of readdirSync(own)) add(name, join(own, name));
  const resolve = createRequire(import.meta.url).resolve;
  for (const name of VENDOR_FILES) add(name, resolve(`uplot/dist/${name}`));
  return assets;
}
