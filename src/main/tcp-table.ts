import { readFileSync } from 'node:fs';

/**
 * The kernel's TCP tables (Linux `/proc/net/tcp` and `tcp6`): who holds the other end of a
 * loopback connection this process accepted. The client's row has our ports swapped (its local
 * port is our remote one) and carries the uid that created the socket and its inode.
 */

/** `/proc/net/tcp` and `tcp6` lines: local and remote ports, uid and inode of each socket. */
export function parseProcNetTcp(text: string): Array<{ localPort: number; remotePort: number; uid: number; inode: number }> {
  const rows: Array<{ localPort: number; remotePort: number; uid: number; inode: number }> = [];
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 10) continue;
    const local = /:([0-9A-Fa-f]{4})$/.exec(fields[1]!);
    const remote = /:([0-9A-Fa-f]{4})$/.exec(fields[2]!);
    if (!local || !remote) continue;
    rows.push({ localPort: parseInt(local[1]!, 16), remotePort: parseInt(remote[1]!, 16), uid: Number(fields[7]), inode: Number(fields[9]) });
  }
  return rows;
}

/**
 * The client end of an accepted loopback TCP connection: its uid and socket inode, from the
 * kernel's tables. null where there are none (not Linux) or the row is gone (the client closed).
 */
export function tcpClient(
  socket: { localPort?: number; remotePort?: number },
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
  platform: NodeJS.Platform = process.platform,
): { uid: number; inode: number } | null {
  return tcpClients([socket], readFile, platform)[0] ?? null;
}

/** The uid at the other end of each accepted loopback connection (null where unknown). */
export function tcpClientUids(
  sockets: ReadonlyArray<{ localPort?: number; remotePort?: number }>,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
  platform: NodeJS.Platform = process.platform,
): Array<number | null> {
  return tcpClients(sockets, readFile, platform).map((client) => client?.uid ?? null);
}

/**
 * The client end (uid and inode) of each accepted loopback connection, null where unknown,
 * reading each table once for all of them: a flood of connections costs one read per batch,
 * not one per connection (each read is the whole table, every socket of the machine).
 */
function tcpClients(
  sockets: ReadonlyArray<{ localPort?: number; remotePort?: number }>,
  readFile: (path: string) => string,
  platform: NodeJS.Platform,
): Array<{ uid: number; inode: number } | null> {
  const clients: Array<{ uid: number; inode: number } | null> = sockets.map(() => null);
  if (platform !== 'linux') return clients;
  const wanted = new Map<string, number>();
  sockets.forEach((socket, index) => {
    if (socket.localPort && socket.remotePort) wanted.set(`${socket.remotePort}:${socket.localPort}`, index);
  });
  let left = wanted.size;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (left === 0) break;
    let text: string;
    try {
      text = readFile(table);
    } catch {
      continue; // no IPv6
    }
    for (const row of parseProcNetTcp(text)) {
      const index = wanted.get(`${row.localPort}:${row.remotePort}`);
      if (index === undefined || clients[index] !== null) continue;
      clients[index] = { uid: row.uid, inode: row.inode };
      if (--left === 0) break;
    }
  }
  return clients;
}
