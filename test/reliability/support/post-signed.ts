/** One POST of a signed body, as the platform sends it: the status (0 when no answer) and when. */
export async function postSigned(
  url: string,
  body: string,
  signature: string,
): Promise<{ status: number; ms: number; answeredAt: number }> {
  const sent = performance.now();
  let status = 0;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': signature },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    status = res.status;
  } catch {
    status = 0;
  }
  const answeredAt = performance.now();
  return { status, ms: answeredAt - sent, answeredAt };
}
