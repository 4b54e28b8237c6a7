import type http from 'node:http';
import type net from 'node:net';

/**
 * The server's open connections, each with the requests under way on it and the bytes it had read
 * when its last reply ended. One with no request under way and no byte since is idle: it has never
 * sent anything (a browser's preconnect, a probe), or it is a keep-alive connection between
 * requests. Node's own `closeIdleConnections` leaves a connection that has sent nothing open,
 * and such a connection would hold a stopping server up for as long as its client keeps it.
 */
export function trackConnections(server: http.Server, firstRequestTimeoutMs: number): { closeIdle(): void } {
  const open = new Map<net.Socket, { underWay: number; readAtRest: number; requests: number }>();
  server.on('connection', (socket: net.Socket) => {
    const state = { underWay: 0, readAtRest: 0, requests: 0 };
    open.set(socket, state);
    socket.once('close', () => open.delete(socket));
    // Node times a request's headers only once its first byte has come: a connection that sends
    // nothing is closed when its first request's headers are not in within the same time. Closed
    // here, not left to Node's default handler of the socket's timeout, which keeps the socket
    // whenever anything listens to the server's (or a request's) 'timeout' event.
    socket.setTimeout(firstRequestTimeoutMs, () => {
      if (state.requests === 0) socket.destroy();
    });
  });
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    const state = open.get(socket);
    if (!state) return;
    if (state.requests++ === 0) socket.setTimeout(0);
    state.underWay++;
    response.once('close', () => {
      state.underWay--;
      state.readAtRest = socket.bytesRead;
    });
  });
  return {
    closeIdle() {
      for (const [socket, state] of open) {
        if (state.underWay === 0 && socket.bytesRead === state.readAtRest) socket.destroy();
      }
    },
  };
}
