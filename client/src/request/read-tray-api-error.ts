import { TrayApiError } from '../tray-api-error.ts';
import { responseClock, retryAfterMs } from './retry-delay.ts';

/**
 * The TrayApiError for a refused call: the service's code and message when the body is its error
 * shape (`{ status: "error", code, message }`), otherwise code 0 and the HTTP status text, so an
 * answer from something in front of the service (a proxy's error page) is still a TrayApiError.
 * Its Retry-After, when it has one, is read against the answer's own Date (responseClock).
 */
export async function readTrayApiError(response: Response): Promise<TrayApiError> {
  const text = await response.text().catch(() => '');
  const body = parseJson(text);
  const requestId = response.headers.get('X-Request-Id') ?? undefined;
  const wait = retryAfterMs(response.headers.get('Retry-After'), responseClock(response.headers, Date.now()));
  if (isErrorBody(body)) return new TrayApiError(response.status, body.code, body.message, requestId, wait);
  const statusText = response.statusText ? ` ${response.statusText}` : '';
  return new TrayApiError(
    response.status,
    0,
    `HTTP ${response.status}${statusText} (not a tray API error)`,
    requestId,
    wait,
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isErrorBody(body: unknown): body is { code: number; message: string } {
  if (typeof body !== 'object' || body === null) return false;
  // The service's shape, `status: 'error'` included: a gateway's own {code, message} is not it.
  const { status, code, message } = body as Record<string, unknown>;
  return status === 'error' && typeof code === 'number' && typeof message === 'string';
}
