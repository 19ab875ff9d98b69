import { request as httpRequest, type ClientRequest } from 'node:http';

/** An open SSE stream of a bench; close() ends it. */
export interface Stream {
  close(): void;
}

/** Opens an SSE stream and calls `onEvent` per event; resolves once the response headers arrived. */
export function openStream(
  url: string,
  token: string,
  onEvent: (event: string, data: string) => void,
): Promise<Stream> {
  return new Promise((done, fail) => {
    const req: ClientRequest = httpRequest(url, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
    });
    req.on('error', fail);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        fail(new Error(`stream answered ${res.statusCode}`));
        res.resume();
        return;
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) onEvent(event, data);
        }
      });
      done({ close: () => req.destroy() });
    });
    req.end();
  });
}
