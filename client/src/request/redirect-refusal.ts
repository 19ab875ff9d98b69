import { TrayApiError } from '../tray-api-error.ts';

/**
 * The tray service never redirects: a redirect comes from something at `baseUrl` pointing
 * elsewhere (`http://` answered by a move to `https://`, a renamed host). Followed, a POST
 * arrived as a GET (refused as 405) and a move to another origin dropped the token (refused as
 * 401): the call is refused here instead, naming where it was sent, so `baseUrl` can be set to
 * it. Fetched with `redirect: 'manual'`: a browser answers an opaque redirect (status 0, no
 * headers), Node the 3xx itself.
 */
export function redirectRefusal(response: Response): TrayApiError | undefined {
  const opaque = response.type === 'opaqueredirect';
  if (!opaque && (response.status < 300 || response.status > 399)) return undefined;
  const location = response.headers.get('Location');
  return new TrayApiError(
    response.status,
    0,
    `the tray service's address answered a redirect${location ? ` to ${location}` : ''}; set baseUrl to the address it names`,
    response.headers.get('X-Request-Id') ?? undefined,
  );
}
