import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { procfs, runs } from '../support/capabilities.js';
import { namedPipePeer, parseProcNetTcp, parseSsUnix, tcpPeer, unixSocketPeer } from '../../src/main/agent/pairing/peer.js';
import { tcpClientUids } from '../../src/main/tcp-table.js';
import { createServer as createHttp } from 'node:http';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('socket tables', () => {
  it('reads inode, peer and holders from ss lines, paths with spaces included', () => {
    const table = parseSsUnix(
      [
        'u_str ESTAB 0      0   * 3350469 * 3350470 users:(("node",pid=19283,fd=20))  ',
        'u_str ESTAB 0      0   /tmp/a b/bridge.sock 3350470 * 3350469 users:(("node",pid=19283,fd=21),("sh",pid=7,fd=3))',
        'garbage',
      ].join('\n'),
    );
    expect(table.get(3350469)).toEqual({ peer: 3350470, pids: [19283] });
    expect(table.get(3350470)).toEqual({ peer: 3350469, pids: [19283, 7] });
    expect(table.size).toBe(2);
  });

  it('reads ports, uid and inode from /proc/net/tcp', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000 65534        0 4242 1 0000000000000000 20 4 30 10 -1',
    ].join('\n');
    expect(parseProcNetTcp(text)).toEqual([{ localPort: 8080, remotePort: 50000, uid: 65534, inode: 4242 }]);
  });

  it('finds the uids of a batch of accepted connections with one read of each table', () => {
    const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
    const row = (local: number, remote: number, uid: number) =>
      `   0: 0100007F:${local.toString(16).toUpperCase().padStart(4, '0')} 0100007F:${remote.toString(16).toUpperCase().padStart(4, '0')} 01 00000000:00000000 00:00000000 00000000 ${uid}        0 ${local} 1 0000000000000000 20 4 30 10 -1`;
    // The server listens on 8080; clients at 50000 (uid 1000) and 50001 (uid 0); our own ends too.
    const v4 = [header, row(8080, 50000, 0), row(50000, 8080, 1000), row(50001, 8080, 0), row(8080, 50001, 0)].join('\n');
    const reads: string[] = [];
    const readFile = (path: string) => {
      reads.push(path);
      if (path.endsWith('tcp6')) throw new Error('no IPv6');
      return v4;
    };
    const sockets = [
      { localPort: 8080, remotePort: 50000 },
      { localPort: 8080, remotePort: 50001 },
      { localPort: 8080, remotePort: 50002 },
    ];
    expect(tcpClientUids(sockets, readFile, 'linux')).toEqual([1000, 0, null]);
    expect(reads).toEqual(['/proc/net/tcp', '/proc/net/tcp6']);
    expect(tcpClientUids(sockets, readFile, 'darwin')).toEqual([null, null, null]);
  });

  it('says nothing is verified on a Windows named pipe', () => {
    expect(namedPipePeer()).toEqual({ uid: null, pid: null, exe: null, by: 'none', via: 'named-pipe' });
  });
});

describe.runIf(runs('the kernel names the peer (/proc/net/unix, /proc/<pid>/fd)', procfs))('the kernel names the peer', () => {
  it('of a Unix-socket connection: this process, its uid and executable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-peer-'));
    dirs.push(dir);
    const path = join(dir, 's.sock');
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.on('connection', resolve));
    await new Promise<void>((resolve) => server.listen(path, resolve));
    connect(path);
    const socket = await accepted;
    const facts = await unixSocketPeer(socket, { ownUid: process.getuid!() });
    // Our own test process holds both ends; the peer end is held by this process only.
    expect(facts).toEqual({ uid: process.getuid!(), pid: process.pid, exe: process.execPath, by: 'kernel', via: 'unix-socket' });
    socket.destroy();
    server.close();
  });

  it('falls back to the directory proof (uid only) when the socket tables say nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-peer-'));
    dirs.push(dir);
    const path = join(dir, 's.sock');
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.on('connection', resolve));
    await new Promise<void>((resolve) => server.listen(path, resolve));
    connect(path);
    const socket = await accepted;
    expect(await unixSocketPeer(socket, { ownUid: 4321, ss: async () => null })).toEqual({
      uid: 4321,
      pid: null,
      exe: null,
      by: 'directory',
      via: 'unix-socket',
    });
    socket.destroy();
    server.close();
  });

  it('of a loopback TCP connection: uid, pid and executable from /proc/net/tcp', async () => {
    const server = createHttp((req, res) => res.end(JSON.stringify(tcpPeer(req.socket))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const facts = (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as Record<string, unknown>;
    server.close();
    server.closeAllConnections();
    expect(facts).toEqual({ uid: process.getuid!(), pid: process.pid, exe: process.execPath, by: 'kernel', via: 'tcp' });
  });
});
