// Runs inside a confined terminal's sandbox (Linux, network on; src/main/sandbox/launch.ts):
// listens on 127.0.0.1:PORT of the sandbox's own loopback, which HTTP_PROXY and ALL_PROXY name
// (most tools take only a TCP host:port), and relays each connection to the proxy's Unix
// socket bound into the sandbox. Tandem's proxy on the host checks every target. Once it
// listens it says so on the socket (one 0x00 byte), and the terminal's open waits for that.
// Usage: node forwarder.mjs PORT SOCKET
import net from 'node:net';

const [port, socketPath] = process.argv.slice(2);
const server = net.createServer({ allowHalfOpen: true }, (client) => {
  const proxy = net.connect({ path: socketPath, allowHalfOpen: true });
  client.pipe(proxy);
  proxy.pipe(client);
  client.on('error', () => proxy.destroy());
  proxy.on('error', () => client.destroy());
  client.on('close', () => proxy.destroy());
  proxy.on('close', () => client.destroy());
});
server.listen(Number(port), '127.0.0.1', () => {
  const hello = net.connect({ path: socketPath }, () => hello.end(Buffer.from([0])));
  hello.on('error', () => {});
});
server.on('error', (error) => {
  process.stderr.write(`tandem forwarder: ${error.message}\n`);
  process.exit(1);
});
