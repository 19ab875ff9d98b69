import type { RequestHandler } from 'express';
import type { HelmetOptions } from 'helmet';
import { helmetHeaders } from './helmet-headers.ts';

/**
 * `app.use(helmet())` with its headers computed once (helmetHeaders) and set in one call per
 * response. helmet walks twelve middlewares and twelve setHeader calls on every request: about
 * 0.04 ms of each tray API call under `bench:api`, where the whole call costs about 1 ms. For
 * options without per-request values only. `computed` lets an app that also sends them outside
 * Express (the receiver's webhook handler) compute them once; `overPlainHttp` are the headers
 * of an answer to a request that did not come over https (`req.secure`: the socket's TLS, or a
 * trusted proxy's X-Forwarded-Proto under the app's `trust proxy`), the same by default.
 */
export function securityHeaders(
  computed: ReadonlyMap<string, string> = helmetHeaders(),
  overPlainHttp: ReadonlyMap<string, string> = computed,
): RequestHandler {
  // Names and values in two plain arrays, set by index: res.setHeaders(map) walks a Map iterator,
  // which made an entry array and a result object per header on every response (about 1 KB a call).
  const arrays = (headers: ReadonlyMap<string, string>) =>
    [[...headers.keys()], [...headers.values()]] as const;
  const [secureNames, secureValues] = arrays(computed);
  const [plainNames, plainValues] = arrays(overPlainHttp);
  return (req, res, next) => {
    const secure = req.secure;
    const names = secure ? secureNames : plainNames;
    const values = secure ? secureValues : plainValues;
    for (let i = 0; i < names.length; i += 1) res.setHeader(names[i] ?? '', values[i] ?? '');
    next();
  };
}

/**
 * helmet's policy with styles and fonts from the page's own origin only: its default also takes
 * any https site's and inline styles, which a page with its own stylesheet does not need and a
 * markup injection could use (CSS can read a page's text out through the URLs it loads).
 */
const OWN_STYLES_ONLY = { styleSrc: ["'self'"], fontSrc: ["'self'"] } as const;

/**
 * helmet's options for a listener that serves pages. `plainHttp`: for an answer to a request that
 * did not come over https, without the Content-Security-Policy's `upgrade-insecure-requests`,
 * which would make the browser fetch the page's own scripts, styles, form posts and API calls
 * over https, from a listener that only speaks http (a LAN address, no TLS proxy), and break the
 * page. `ownStylesOnly`: OWN_STYLES_ONLY.
 */
export function pageHelmetOptions(
  options: { ownStylesOnly?: boolean; plainHttp?: boolean } = {},
): Readonly<HelmetOptions> {
  return {
    contentSecurityPolicy: {
      directives: {
        ...(options.ownStylesOnly ? OWN_STYLES_ONLY : {}),
        ...(options.plainHttp ? { upgradeInsecureRequests: null } : {}),
      },
    },
  };
}

/**
 * The security headers of a listener that serves pages to browsers (the tray API with its demo
 * page, the admin listener with its sign-in form, dashboard and console): helmet's defaults, over
 * plain http without `upgrade-insecure-requests`, and with `ownStylesOnly` styles and fonts from
 * the listener itself only (the tray API; the admin listener's dashboard and sign-in pages use
 * inline styles).
 */
export function pageSecurityHeaders(options: { ownStylesOnly?: boolean } = {}): RequestHandler {
  return securityHeaders(
    helmetHeaders(pageHelmetOptions(options)),
    helmetHeaders(pageHelmetOptions({ ...options, plainHttp: true })),
  );
}
