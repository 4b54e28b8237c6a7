import net from 'node:net';

/** The address Kosh is to listen on is held by another process, or not allowed to this user. */
export class AddressUnavailableError extends Error {}

/** The error a failed listen on host:port is reported as: a sentence, not a stack trace. */
export function listenFailure(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new AddressUnavailableError(
      `${host}:${port} is already in use by another process: stop it, or start Kosh on another port (--port N, or PORT=N).`,
    );
  }
  if (code === 'EACCES') {
    return new AddressUnavailableError(
      `this user may not listen on ${host}:${port}: choose a port above 1023 (--port N, or PORT=N), or put a proxy in front.`,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') {
    return new AddressUnavailableError(
      `${host} is not a name this machine can resolve to an address to listen on (HOST, or --host).`,
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return new AddressUnavailableError(`${host} is not an address of this machine (HOST, or --host).`);
  }
  return error;
}

/**
 * Checks, before a start does anything that cannot be taken back (a first start creates the sandbox
 * accounts and prints their credentials), that host:port can be listened on.
 */
export function checkAddressFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error) => reject(listenFailure(error, host, port)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
