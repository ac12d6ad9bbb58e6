// A TCP relay the test can cut: what a database looks like to Keyward when a network, a proxy or a
// load balancer in front of it fails. node:net streams, so backpressure is handled.
import { connect, createServer, type AddressInfo, type Socket as NetSocket } from "node:net";

export interface Relay {
  port: number;
  /** Connections relayed to the target so far (not those closed while cut). */
  readonly relayed: number;
  /** Drops every relayed connection, and closes new ones as soon as they open. */
  cut(): void;
  /**
   * Stops carrying bytes either way without closing anything: what a network partition or a vanished
   * host looks like (no RST, no FIN; the client's TCP sees nothing wrong). restore() resumes.
   */
  freeze(): void;
  restore(): void;
  stop(): void;
}

/** A TCP relay to PostgreSQL on 127.0.0.1 that the test can cut (node:net streams: backpressure handled). */
export async function startRelay(target: { hostname: string; port: number }): Promise<Relay> {
  const open = new Set<NetSocket>();
  let down = false;
  let frozen = false;
  let relayed = 0;
  const flushers = new Set<() => void>();
  const server = createServer((client) => {
    if (down) return void client.end();
    relayed++;
    const upstream = connect(target.port, target.hostname);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("close", () => open.delete(s));
      s.on("error", () => undefined);
    }
    // Not pipe(): a frozen relay must hold bytes back, then deliver them in order on restore().
    const held = new Map<NetSocket, Buffer[]>([
      [client, []],
      [upstream, []],
    ]);
    const carry = (from: NetSocket, to: NetSocket) =>
      from.on("data", (chunk: Buffer) => {
        if (frozen) held.get(to)!.push(chunk);
        else to.write(chunk);
      });
    carry(client, upstream);
    carry(upstream, client);
    flushers.add(() => {
      for (const [to, chunks] of held) for (const chunk of chunks.splice(0)) to.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const cut = () => {
    down = true;
    for (const s of open) s.resetAndDestroy();
    open.clear();
  };
  return {
    port: (server.address() as AddressInfo).port,
    get relayed() {
      return relayed;
    },
    cut,
    freeze() {
      frozen = true;
    },
    restore() {
      down = false;
      frozen = false;
      for (const flush of flushers) flush();
    },
    stop() {
      cut();
      server.close();
    },
  };
}
