// A PostgreSQL server that takes TLS connections only, as managed PostgreSQL services do: it answers
// the protocol's SSLRequest with "S", runs the TLS handshake with the given certificate, and relays
// the decrypted stream to a plain PostgreSQL server. A client that starts without TLS is closed.
// Runs under Node.js (server-side TLS over an accepted socket), started by test/support/pg-tls.ts:
//   node test/support/pg-tls-relay.mjs <target host> <target port> <cert.pem> <key.pem>
// Prints {"port": N} once listening, then one {"tls": true|false} line per connection.
import { readFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { TLSSocket } from "node:tls";

const [host, port, certFile, keyFile] = process.argv.slice(2);
const cert = readFileSync(certFile, "utf8");
const key = readFileSync(keyFile, "utf8");
const SSL_REQUEST = 80877103;

const server = createServer((client) => {
  client.on("error", () => {});
  client.once("readable", function first() {
    const head = client.read(8);
    if (head === null) return client.once("readable", first);
    if (head.readInt32BE(0) !== 8 || head.readInt32BE(4) !== SSL_REQUEST) {
      console.log(JSON.stringify({ tls: false }));
      return client.destroy();
    }
    client.write("S");
    const secure = new TLSSocket(client, { isServer: true, cert, key });
    secure.on("error", () => client.destroy());
    secure.once("secure", () => {
      console.log(JSON.stringify({ tls: true }));
      const upstream = connect(Number(port), host);
      upstream.on("error", () => secure.destroy());
      secure.pipe(upstream);
      upstream.pipe(secure);
      secure.on("close", () => upstream.destroy());
      upstream.on("close", () => secure.destroy());
    });
  });
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
process.on("SIGTERM", () => process.exit(0));
