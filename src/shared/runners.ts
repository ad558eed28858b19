/**
 * Programs (and subcommands) that run their arguments, or a script they name, as a command: an
 * entry for any further arguments would allow every command (black-box round 10: "Always allow
 * `timeout`" for `timeout 300 npm test` let `timeout 9 sh -c 'cat ~/.ssh/id_rsa'` run). Editors and
 * stream editors count: sed's script runs commands (`e`, `s///e`) and writes files (`w`) (round
 * 11: "Always allow sed" let `sed '1e id > X' README.md` run), as do ed's, vim's `-c`, emacs's
 * `--eval`, m4's `syscmd` and dc's `!`.
 */
// prettier-ignore
export const runsItsArguments: ReadonlySet<string> = new Set([
  'timeout', 'env', 'nice', 'nohup', 'stdbuf', 'time', 'xargs', 'watch', 'sudo', 'doas', 'su', 'runuser', 'setpriv', 'setsid', 'taskset',
  'ionice', 'chrt', 'flock', 'unbuffer', 'script', 'strace', 'ltrace', 'gdb', 'chroot', 'unshare', 'nsenter', 'busybox', 'exec', 'command',
  'builtin', 'eval', 'parallel', 'entr', 'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'pwsh', 'powershell', 'python', 'python3', 'node', 'deno',
  'bun', 'bunx', 'npx', 'uvx', 'perl', 'ruby', 'php', 'lua', 'awk', 'gawk', 'tclsh', 'osascript', 'open', 'xdg-open', 'ssh', 'env-cmd', 'dotenv',
  'npm exec', 'pnpm exec', 'pnpm dlx', 'yarn exec', 'yarn dlx', 'uv run', 'uv tool', 'poetry run', 'pipx run', 'conda run', 'docker run',
  'docker exec', 'podman run', 'podman exec', 'kubectl exec', 'kubectl run', 'go run', 'cargo run', 'dotnet exec', 'deno run', 'gh extension',
  'sed', 'gsed', 'ed', 'ex', 'vi', 'vim', 'nvim', 'view', 'emacs', 'expect', 'm4', 'dc',
  // Options or subcommands that run a command (round 12): make --eval, tar --checkpoint-action, zip -TT, git clone -u/-c,
  // git rebase -x, git bisect run, git difftool -x, npm test --node-options, cargo --config, go test -exec / -toolexec.
  'make', 'gmake', 'tar', 'zip', 'git clone', 'git rebase', 'git bisect', 'git submodule', 'git difftool', 'git mergetool', 'git filter-branch',
  'npm test', 'npm run', 'npm start', 'npm run-script', 'pnpm run', 'pnpm test', 'yarn run', 'yarn test', 'bun run', 'bun test', 'cargo', 'go',
]);

/**
 * Programs (and git subcommands) whose every option that writes a file, runs a program or reads
 * other configuration Tandem's judge knows and refuses (allow-entries.ts `builtinRefusals`,
 * `knownOptions`), or that have none: the approval card offers "Always allow PROGRAM" (any
 * further arguments, still checked) for these only. For any other program an entry for any
 * arguments would trust options nobody checked (black-box round 12: a click on "Always allow
 * `git rebase`" let `git rebase -x 'cat ~/.ssh/id_rsa'` run), so the card offers the exact line.
 */
// prettier-ignore
export const argumentsKnown: ReadonlySet<string> = new Set([
  'ls', 'pwd', 'cat', 'head', 'tail', 'wc', 'echo', 'whoami', 'date', 'grep', 'rg', 'find', 'stat', 'file', 'du', 'df', 'sort', 'mkdir', 'touch',
  'printf', 'basename', 'dirname', 'realpath', 'uname', 'id', 'true', 'false', 'seq', 'nproc',
  'git status', 'git diff', 'git show', 'git log', 'git branch', 'git grep',
]);
