import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import type { MessageRenderer } from '../messages/message-renderer.ts';
import { demoPage } from './demo-page.ts';

export interface DemoRouterDeps {
  messages: MessageRenderer;
}

export const demoPaths = ['/demo', '/demo/demo.js', '/demo/demo.css'];

const read = (file: string) => readFileSync(join(import.meta.dirname, 'public', file), 'utf8');

/**
 * The quick-start page (TRAY_DEMO=on): one user's tray, live. Plain files, no build step; the
 * script is a same-origin file because helmet's Content-Security-Policy refuses inline scripts,
 * and it calls only the public tray API with a token the user pastes (docs/live-tray.md, "Demo").
 */
export function createDemoRouter(deps: DemoRouterDeps): Router {
  const router = Router();
  const html = demoPage(deps.messages.locales, deps.messages.defaultLocale);
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
  return router;
}
