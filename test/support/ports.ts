// Ports for tests that need one named in advance (a program's configuration) or one with nothing
// behind it (a refused connection).

/** A TCP port on 127.0.0.1 that nothing listens on right now (bound, read, released). */
export function unusedPort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}
