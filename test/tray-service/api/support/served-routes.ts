import type { Express } from 'express';

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: unknown;
}

/**
 * Every route an Express app serves, as `METHOD /path` in OpenAPI's spelling ({param}, no trailing
 * slash), walking mounted routers. `.all()` handlers (405 answers) are not routes of their own.
 */
export function servedRoutes(app: Express): string[] {
  const routes: string[] = [];
  const walk = (stack: readonly Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const path of [layer.route.path].flat()) {
          const full = `${prefix}${path.replace(/:(\w+)/g, '{$1}')}`.replace(/(.)\/$/, '$1');
          for (const method of Object.keys(layer.route.methods).filter((m) => m !== '_all')) {
            routes.push(`${method.toUpperCase()} ${full}`);
          }
        }
      } else if (layer.handle?.stack) {
        walk(
          layer.handle.stack,
          `${prefix}${typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : ''}`,
        );
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return [...new Set(routes)].sort();
}

/** Every operation of an OpenAPI document, as `METHOD /path`. */
export function documentedRoutes(document: { paths?: Record<string, object> }): string[] {
  return Object.entries(document.paths ?? {})
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}
