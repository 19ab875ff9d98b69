import { TrayApiError } from '../tray-api-error.ts';

/**
 * The TrayApiError for a response that is not a success: the service's own code and message when
 * the body is its JSON error shape, or else (a proxy's page, a cut connection) `http_<status>`.
 */
export async function refusalOf(response: Response): Promise<TrayApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === 'object' && body !== null && 'code' in body && 'message' in body) {
      const { code, message } = body;
      if ((typeof code === 'number' || typeof code === 'string') && typeof message === 'string')
        return new TrayApiError(response.status, String(code), message);
    }
  } catch {
    // Not JSON: described by its status below.
  }
  return new TrayApiError(
    response.status,
    `http_${response.status}`,
    `${response.status} ${response.statusText}`,
  );
}
