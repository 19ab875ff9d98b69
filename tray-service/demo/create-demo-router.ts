import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import { demoPage } from './demo-page.ts';

export interface DemoRouterDeps {
  messages: MessageRenderer;
  /** The built client package's modules by path (loadClientModules); empty when it is not built. */
  clientModules: ReadonlyMap<string, string>;
}

/** Every path the demo serves: the page, its script and style, and the client's modules. */
export function demoPaths(clientModules: ReadonlyMap<string, string>): string[] {
  return [
    '/demo',
    '/demo/demo.js',
    '/demo/demo.css',
    ...[...clientModules.keys()].map((file) => `/demo/client/${file}`),
  ];
}

const read = (file: string) => readFileSync(join(import.meta.dirname, 'public', file), 'utf8');

/**
 * The quick-start page (TRAY_DEMO=on): one user's tray, live. Plain files, no build step of its
 * own: its script is a same-origin ES module (helmet's Content-Security-Policy refuses inline
 * scripts) that imports the client package's built modules, served here under /demo/client/, and
 * calls only the public tray API with a token the user pastes (docs/live-tray.md, "Demo page").
 */
export function createDemoRouter(deps: DemoRouterDeps): Router {
  const router = Router();
  const html = demoPage(deps.messages.locales, deps.messages.defaultLocale, deps.clientModules.size > 0);
  const script = read('demo.js');
  const style = read('demo.css');
  router.get('/demo', (_req, res) => {
    res.type('html').send(html);
  });
  router.get('/demo/demo.js', (_req, res) => {
    res.type('text/javascript').send(script);
  });
  router.get('/demo/demo.css', (_req, res) => {
    res.type('text/css').send(style);
  });
  for (const [file, source] of deps.clientModules) {
    router.get(`/demo/client/${file}`, (_req, res) => {
      res.type('text/javascript').send(source);
    });
  }
  return router;
}
