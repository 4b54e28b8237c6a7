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
    open.set(socket, { underWay: 0, readAtRest: 0, requests: 0 });
    socket.once('close', () => open.delete(socket));
    // Node times a request's headers only once its first byte has come: a connection that sends
    // nothing is closed when its first request's headers are not in within the same time (Node's
    // own handler of the socket's timeout destroys a connection with no request on it).
    socket.setTimeout(firstRequestTimeoutMs);
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
