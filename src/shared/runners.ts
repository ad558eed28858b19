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
]);
