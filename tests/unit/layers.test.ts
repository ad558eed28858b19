// The layer rules (.dependency-cruiser.cjs) as `npm test` runs them: the real tree passes with no
// exception listed, and an import planted against the picture fails, in a copy of the real tree
// and in a small tree per rule.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '..', '..');
const depcruise = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const temps: string[] = [];

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  out: string;
}

/** The command `npm test` runs, in `cwd`, with the repository's rules. */
function cruise(cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [depcruise, 'src', '--config', join(repo, '.dependency-cruiser.cjs'), '--output-type', 'err'],
      { cwd, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: stdout + stderr });
      },
    );
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-layers-'));
  temps.push(dir);
  return dir;
}

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** A small tree with one module per layer, each importing only downward. */
function cleanTree(): string {
  const root = tempDir();
  write(root, 'tsconfig.json', JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'bundler' } }));
  write(root, 'src/shared/contract.ts', 'export const code = "internal";\n');
  write(root, 'src/main/pty/platform.ts', 'import { code } from "../../shared/contract";\nexport const pty = code;\n');
  write(root, 'src/main/terminal/session.ts', 'import { pty } from "../pty/platform";\nexport const session = pty;\n');
  write(root, 'src/main/host/host.ts', 'import { session } from "../terminal/session";\nexport const host = session;\n');
  write(root, 'src/main/agent/service.ts', 'import { host } from "../host/host";\nexport const agent = host;\n');
  write(root, 'src/main/web/server.ts', 'import { host } from "../host/host";\nexport const web = host;\n');
  write(root, 'src/main/electron/ipc.ts', 'import { host } from "../host/host";\nexport const ipc = host;\n');
  write(root, 'src/main/launch/app-location.ts', 'export const where = "/opt/tandem";\n');
  write(
    root,
    'src/main/runtime.ts',
    'import { agent } from "./agent/service";\nimport { web } from "./web/server";\nimport { where } from "./launch/app-location";\nexport const runtime = [agent, web, where];\n',
  );
  write(root, 'src/main/index.ts', 'import { ipc } from "./electron/ipc";\nimport { runtime } from "./runtime";\nexport const main = [ipc, runtime];\n');
  write(root, 'src/preload/index.ts', 'import { code } from "../shared/contract";\nexport const preload = code;\n');
  write(root, 'src/renderer/src/App.ts', 'import { code } from "../../shared/contract";\nexport const app = code;\n');
  return root;
}

describe('layer rules (dependency-cruiser)', () => {
  it('pass on the real tree, with no known violation to excuse any import', async () => {
    const run = await cruise(repo);
    expect(run.out).toContain('no dependency violations found');
    expect(run.code).toBe(0);
  });

  it('fail on a wrong-way import planted in a copy of the real tree', async () => {
    const root = tempDir();
    cpSync(join(repo, 'src'), join(root, 'src'), { recursive: true });
    cpSync(join(repo, 'tsconfig.json'), join(root, 'tsconfig.json'));
    symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir');
    // the PTY layer reaching up into the host
    write(root, 'src/main/pty/planted.ts', "import { TerminalHost } from '../host/host';\nexport const planted = TerminalHost;\n");
    const run = await cruise(root);
    expect(run.code).not.toBe(0);
    expect(run.out).toContain('layer-platform-imports-upward');
    expect(run.out).toContain('src/main/pty/planted.ts');
  });

  it('pass on a small tree that imports only downward', async () => {
    const run = await cruise(cleanTree());
    expect(run.out).toContain('no dependency violations found');
    expect(run.code).toBe(0);
  });

  const plants: { rule: string; file: string; text: string }[] = [
    { rule: 'layer-shared-imports-upward', file: 'src/shared/bad.ts', text: 'import { pty } from "../main/pty/platform";\nexport const bad = pty;\n' },
    { rule: 'layer-leaf-imports-upward', file: 'src/main/launch/bad.ts', text: 'import { host } from "../host/host";\nexport const bad = host;\n' },
    { rule: 'layer-terminal-imports-upward', file: 'src/main/terminal/bad.ts', text: 'import { host } from "../host/host";\nexport const bad = host;\n' },
    { rule: 'layer-host-imports-upward', file: 'src/main/host/bad.ts', text: 'import { agent } from "../agent/service";\nexport const bad = agent;\n' },
    { rule: 'agent-only-through-host', file: 'src/main/agent/bad.ts', text: 'import { session } from "../terminal/session";\nexport const bad = session;\n' },
    { rule: 'agent-only-through-port', file: 'src/main/agent/port-bad.ts', text: 'import { a } from "../host/a";\nexport const bad = a;\n' },
    { rule: 'layer-edge-imports-upward', file: 'src/main/agent/root-bad.ts', text: 'import { runtime } from "../runtime";\nexport const bad = runtime;\n' },
    { rule: 'edge-imports-electron-shell', file: 'src/main/web/ipc-bad.ts', text: 'import { ipc } from "../electron/ipc";\nexport const bad = ipc;\n' },
    { rule: 'main-imports-renderer', file: 'src/main/host/ui-bad.ts', text: 'import { app } from "../../renderer/src/App";\nexport const bad = app;\n' },
    { rule: 'transport-imports-agent', file: 'src/main/web/bad.ts', text: 'import { agent } from "../agent/service";\nexport const bad = agent;\n' },
    { rule: 'renderer-imports-main', file: 'src/renderer/src/bad.ts', text: 'import { host } from "../../main/host/host";\nexport const bad = host;\n' },
    { rule: 'preload-imports-beyond-shared', file: 'src/preload/bad.ts', text: 'import { host } from "../main/host/host";\nexport const bad = host;\n' },
    { rule: 'electron-outside-shell', file: 'src/main/host/electron-bad.ts', text: 'import { app } from "electron";\nexport const bad = app;\n' },
    // a type-only import counts too: a layer that needs another's types depends on it
    {
      rule: 'layer-platform-imports-upward',
      file: 'src/main/pty/bad.ts',
      text: 'import type { session } from "../terminal/session";\nexport type Bad = typeof session;\n',
    },
    { rule: 'no-circular', file: 'src/main/host/a.ts', text: 'import { b } from "./b";\nexport const a = () => b;\n' },
  ];

  it('plant one import against every rule the config has', () => {
    const config = createRequire(import.meta.url)(join(repo, '.dependency-cruiser.cjs')) as { forbidden: { name: string }[] };
    expect(new Set(plants.map((plant) => plant.rule))).toEqual(new Set(config.forbidden.map((rule) => rule.name)));
  });

  it('fail on an import planted against each rule, each named with its file', async () => {
    const root = cleanTree();
    for (const { file, text } of plants) write(root, file, text);
    write(root, 'src/main/host/b.ts', 'import { a } from "./a";\nexport const b = () => a;\n');
    const run = await cruise(root);
    expect(run.code).not.toBe(0);
    const lines = run.out.split('\n');
    for (const { rule, file } of plants) {
      expect(
        lines.some((line) => line.includes(`${rule}:`) && line.includes(file)),
        `${rule} on ${file}`,
      ).toBe(true);
    }
  });
});
