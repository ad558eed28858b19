import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminalSession } from '../src/main/terminal/session/session.js';
import { agentOptions } from './lib/engine.js';
const home = mkdtempSync(join(tmpdir(), 'probe-home-'));
const stateDir = mkdtempSync(join(tmpdir(), 'probe-state-'));
const workspace = join(home, 'sandbox-project');
mkdirSync(workspace, { recursive: true });
execFileSync('git', ['init', '-q', workspace]);
const net = process.argv[2] === 'net';
const sandbox = { mode: 'workspace-write', network: net, agent: 'bench', stateDir, discoveryDir: join(stateDir, 'discovery') } as const;
const time = async (extra: object) => {
  const t0 = performance.now();
  const s = await TerminalSession.start(agentOptions(home, 'bash', { cwd: workspace, ...extra }));
  const ms = performance.now() - t0;
  await s.close();
  return ms;
};
const c: number[] = [], p: number[] = [];
for (let i = 0; i < 12; i++) { p.push(await time({})); c.push(await time({ sandbox })); }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1].toFixed(1);
console.log('plain', med(p), 'confined', med(c));
