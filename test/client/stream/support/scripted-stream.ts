import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** One stream request the client sent to a scripted server. */
export interface StreamRequest {
  /** Its place among the stream requests, from 0. */
  index: number;
  /** When it arrived (Date.now()). */
  at: number;
  /** The id the client resumed after (`lastEventId` in the query), null when none. */
  lastEventId: string | null;
  /** The stream the client named as its previous one (`replaces` in the query), null when none. */
  replaces: string | null;
}

export interface ScriptedStream {
  /** The server's handler: tickets are sold to anyone, streams are answered by the script. */
  handler: RequestListener;
  /** Every stream request so far, in order. */
  readonly requests: StreamRequest[];
  /** When each ticket request arrived (Date.now()). */
  readonly tickets: number[];
}

/**
 * The two doors openTrayStream calls, scripted: `POST …/stream-ticket` answered by `ticket`
 * (by default a ticket, as the service sells one), and `GET …/stream` answered by `stream`.
 */
export function scriptedStream(
  stream: (res: ServerResponse, request: StreamRequest) => void,
  ticket: (res: ServerResponse, req: IncomingMessage) => void = sellTicket,
): ScriptedStream {
  const requests: StreamRequest[] = [];
  const tickets: number[] = [];
  return {
    requests,
    tickets,
    handler: (req, res) => {
      const url = new URL(req.url ?? '/', 'http://scripted');
      if (url.pathname === '/notifications/v3/stream-ticket') {
        tickets.push(Date.now());
        ticket(res, req);
        return;
      }
      const request = {
        index: requests.length,
        at: Date.now(),
        lastEventId: url.searchParams.get('lastEventId'),
        replaces: url.searchParams.get('replaces'),
      };
      requests.push(request);
      stream(res, request);
    },
  };
}

function sellTicket(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ data: { ticket: 'a-ticket', expiresIn: 30 } }));
}

/** One event as the service frames it: name, id, data, blank line. */
export const sseEvent = (event: string, id: string, data: unknown) =>
  `event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`;

/** The `opened` event the service writes first on every stream, naming the stream (`streamId`). */
export const openedEvent = (index: number) =>
  sseEvent('opened', `o${index}`, { streamId: `0000000a${index}-00000000-0000-4000-8000-000000000000` });

/** The headers of an event stream, as the service writes them. */
export const eventStreamHead = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
};
