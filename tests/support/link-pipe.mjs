// A stand-in for `ssh -T DESTINATION COMMAND` in the link tests that need no sshd: it pipes
// stdin/stdout to the Unix socket named as DESTINATION (what `tandem host --stdio` does on the
// remote after ssh). Its only job is to be a process the test can kill, as it kills ssh.
import { connect } from 'node:net';

const args = process.argv.slice(2).filter((arg) => arg !== '-T');
const socket = connect(args[0]);
socket.on('connect', () => {
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
});
socket.on('error', (error) => {
  process.stderr.write(`link-pipe: ${error.message}\n`);
  process.exit(255);
});
socket.on('close', () => process.exit(0));
