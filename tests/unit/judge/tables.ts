/**
 * Lines for the judge, per shell. `{home}`, `{state}` and `{outside}` are replaced by the
 * fixture's paths. Allowed lines must run without asking in a clean workspace; hostile lines
 * must ask (every example of issue 10, classes 1, 3 and 4, is among them).
 */

/** Read-only lines of literal words, allowed in bash, sh and zsh alike. */
// prettier-ignore
export const posixAllowed: readonly string[] = [
  'ls', 'ls -la', 'ls -l src', 'ls -a .', 'ls src', 'ls -- src', 'ls -la src README.md', "ls 'src'", 'ls "src"', 'ls -1', 'ls -R src',
  'ls -lh --color=auto', 'ls --group-directories-first', 'ls -d src', 'ls ./src', 'ls src/', 'ls sub/dir', 'ls -la sub/dir/',
  'pwd', 'pwd -P', 'pwd -L',
  'cat README.md', 'cat ./README.md', "cat 'README.md'", 'cat "README.md"', 'cat src/main.ts', 'cat -n README.md', 'cat -A README.md', 'cat README.md src/main.ts',
  'cat link-inside', "cat 'READ'ME.md", 'cat src/../README.md',
  'head README.md', 'head -n 5 README.md', 'head -5 README.md', 'head -c 100 README.md', 'head -n5 README.md',
  'tail README.md', 'tail -n 20 README.md', 'tail -n +2 README.md', 'tail --lines=3 README.md',
  'wc README.md', 'wc -l README.md', 'wc -lc src/main.ts', 'wc -w README.md src/main.ts',
  'echo hello', "echo 'hello world'", 'echo "hello world"', 'echo -n hi', 'echo a b c', 'echo HEAD~1', 'echo a,b', 'echo 50%', 'echo x=y', 'echo --version',
  "echo 'a;b'", "echo 'a|b'", "echo '$HOME'", "echo 'it*'", 'echo "a b"c', "echo '!!'", "echo '=ls'",
  'which git', 'which -a ls', 'whoami', 'date', 'date +%Y-%m-%d', 'date -u', 'date --iso-8601',
  'git status', 'git status -s', 'git status --short', 'git status --porcelain', 'git status -sb', 'git status src', 'git status -- src', 'git status --untracked-files=no',
  'git diff', 'git diff HEAD~1', 'git diff HEAD~1 -- src', 'git diff --stat', 'git diff --cached', 'git diff --name-only HEAD~3', 'git diff main..feature',
  'git diff HEAD~1 HEAD -- README.md', 'git diff -U3', 'git diff --no-ext-diff', 'git diff --no-textconv', 'git diff --word-diff',
  'git show', 'git show HEAD', 'git show HEAD~2', 'git show --stat HEAD', 'git show --format=%H -s', 'git show HEAD:README.md', 'git show v1.0',
  'git log', 'git log --oneline', 'git log -n 5', 'git log -5 --oneline', 'git log --graph --oneline --all', 'git log -p -- src', 'git log --since=2.weeks',
  'git log --author=alice', 'git log main..HEAD',
  'git branch', 'git branch -a', 'git branch -vv', 'git branch --show-current', 'git branch --list', 'git branch -r', 'git branch --merged', 'git branch --sort=-committerdate',
  // Issue 28: searching and looking, with their option checks.
  'ls -lt', 'ls -lah src', 'ls -1R', 'ls -l --sort=size', 'ls -ltr', 'ls -A', 'ls -F src',
  'grep hello README.md', 'grep -rn hello src', 'grep -rn hello', 'grep -i -e hello README.md', 'grep -c hello README.md', 'grep --color=auto -n hello README.md',
  'grep -A3 hello README.md', 'grep -C 2 hello README.md', "grep -r --include='*.ts' export .", 'grep -rl export', 'grep -E a+ README.md', 'grep -ehello README.md',
  'grep -v -w x README.md', 'grep -- -x README.md', 'grep -m1 hello README.md', 'grep --recursive hello src',
  'rg hello', 'rg -n hello src', 'rg -i --hidden hello', "rg -g '*.ts' export", 'rg --files', 'rg -l export src', 'rg -uu hello', 'rg -tts export', 'rg --type=ts export',
  'rg -C2 hello', 'rg --json hello README.md', 'rg -F a.b', 'rg --no-ignore hello sub/dir',
  'find', 'find .', 'find . -name README.md', "find . -name '*.ts'", 'find src -type f', 'find . -maxdepth 2 -type d', 'find . -mtime -7', 'find . -newer README.md',
  'find . -name x -print0', "find . -printf '%p %s'", 'find src -size +1k', 'find . -perm -644', 'find . -type f -not -name x', 'find . -iname readme.md -ls', 'find -H src',
  'git grep hello', 'git grep -n export -- src', 'git grep -i HELLO', 'git grep -c export HEAD', 'git grep -e a --and -e b', 'git grep -W export',
  'stat README.md', 'stat -c %s README.md', 'stat -L link-inside', 'stat --format=%n src', 'stat -f .',
  'file README.md', 'file -b --mime-type README.md', 'file -L link-inside', 'file src/main.ts README.md',
  'du', 'du -sh src', 'du -sh', 'du -h -d 1', 'du -a src', 'du --max-depth=1 -h .', 'df', 'df -h', 'df -h .', 'df -T', 'df --output=source,size .',
];

/** Lines that must ask in bash, sh and zsh alike. */
// prettier-ignore
export const posixHostile: readonly string[] = [
  // Issue 23, attack 8: reads that can change under the agent: following, operands not there yet, FIFOs and devices.
  'tail -f README.md', 'tail -f --retry missing', 'tail --retry README.md', 'tail --follow README.md', 'tail --follow=descriptor README.md', 'tail -qf README.md',
  'cat missing', 'ls missing-but-inside', 'head -n 5 missing', 'cat fifo', 'head fifo', 'wc -l fifo',
  // Class 1: allowed programs that write or execute.
  'git show --format=x --output=.git/config', 'git diff --output=FILE', 'git diff --output FILE', 'git log --outp=x', 'git log --output=/tmp/x', 'git diff --ext-diff',
  'git diff --textconv', 'git show --textconv HEAD', 'git diff --no-index /etc/passwd README.md', 'git -C /tmp status', 'git -c core.fsmonitor=x status',
  "git -c core.pager='touch x' log", 'git --git-dir=/tmp/x status', 'git --work-tree=/ diff', 'git --exec-path=/tmp status', 'git --config-env=core.pager=X log',
  'git log --upload-pack=x', 'git diff --submodule=diff', 'git status --recurse-submodules', 'git branch -D main', 'git branch newbranch', 'git branch -m a b',
  'git branch --set-upstream-to=x', 'git push', 'git commit -m x', 'git checkout .', 'git stash', 'git config core.pager x', 'git show --ext-diff HEAD',
  'git log --exec=x', 'git diff --open-files-in-pager', 'git log --paginate', 'tail -F README.md', 'wc --files0-from=list', 'date -s 2020-01-01', 'date -f /etc/shadow',
  'date --set=now', 'ls --hyperlink',
  // Following symlinks while listing reaches the home or / (-R walks what they point at); signatures run gpg.
  'ls -laRL', 'ls -L', 'ls --dereference -R', 'ls --deref', 'git log --show-signature', 'git show --show-sig HEAD', 'git log --format=%GS', 'git log --pretty=format:%GK -1', 'git log --format %GG',
  // Class 4: reads outside the workspace or of protected places.
  'cat /etc/passwd', 'cat ../outside.txt', 'cat /proc/1/environ', 'cat /proc/self/environ', 'head /dev/pts/0', 'tail -f /dev/pts/1', 'cat /sys/kernel/notes',
  'cat link-outside', 'cat keys/id_ed25519', 'ls keys', 'cat proc-link/1/environ', 'ls /', 'ls ..', 'cat {home}/.ssh/id_ed25519', 'cat {state}/agents/bridge.token',
  // Each process reads these links as its own (black-box round 7): never resolved in Tandem's.
  'cat /proc/self/cwd/README.md', 'cat /proc/thread-self/root{workspace}/README.md', 'cat proc-link/self/cwd/README.md', 'cat /dev/fd/0', 'cat /dev/stdin',
  'ls {state}', 'ls /tmp', 'cat {outside}/notes.txt', 'git diff -- /etc/passwd', 'git diff HEAD -- ../x', 'git status /etc', 'wc -l /etc/shadow', 'head -n 1 ../../x',
  // Class 3: shell syntax.
  'ls $(touch x)', 'ls `touch x`', 'ls $HOME', 'ls ${HOME}', 'ls *.ts', 'ls ?', 'ls [ab]', 'ls {a,b}', 'ls ~', 'ls ~/x', 'ls ~root', 'echo a=~/x', 'echo x:~/y',
  'echo !!', 'echo !-1:s,a,b,', 'echo !$', 'ls !-2', '^a^b', 'ls; touch x', 'ls && touch x', 'ls || touch x', 'ls | sh', 'ls & touch x', 'ls > x', 'ls >> x',
  'cat < x', 'cat <<< x', 'ls 2>x', 'ls <(touch x)', 'ls >(touch x)', 'X=1 ls', 'PATH=/tmp ls', 'ls\ntouch x', 'echo $((1+1))', "echo $'\\x41'", 'echo $"x"',
  'ls "$(touch x)"', 'ls "a`touch x`"', 'ls "!!"', 'ls \\$HOME', "ls 'unterminated", 'ls "unterminated', '(ls)', '{ ls; }', '! ls', 'time ls', 'command ls',
  'env ls', 'exec ls', '\\ls', '/bin/ls', './ls', 'ls # comment', 'ls a#', 'ls ^x', 'ls @(x)', 'ls +(x)', 'if true; then ls; fi', "ls 'a''b'", 'coproc ls',
  'function f { ls; }', 'ls \x07', 'cat =(touch x)', 'ls =ls', 'ls *(e:\'touch /tmp/x\':)', 'ls **/*(.)', 'ls a(:s/x/y/)', 'echo ${(f)x}', 'echo $~x',
  'ls <1-10>', 'cat README.md | sh', 'npm install', 'rm -rf build', 'touch x', 'sh -c ls', 'bash', 'python3 -c 1', 'find . -exec touch x ;', 'less README.md',
  'more README.md', 'sort -o x README.md',
  // Issue 28: the searching programs' options that write, run programs, read other files or follow symlinks out.
  'find . -exec touch x ;', "find . -exec touch x ';'", 'find . -execdir touch x +', "find . -ok rm x ';'", "find . -okdir rm x ';'", 'find . -delete', 'find . -fprint x',
  'find . -fprint0 x', 'find . -fprintf x %p', 'find . -fls x', 'find -L . -name x', 'find . -follow', 'find -D exec .', 'find -O3 .', 'find . -files0-from x',
  'find /', 'find ..', 'find keys', 'find {home}', 'find {state}', 'find . -newer /etc/passwd', 'find proc-link', 'find . -unknown-predicate',
  'rg --pre ./evil hello', 'rg --pre=./evil hello', 'rg --pre-glob x hello', 'rg -z hello', 'rg --search-zip hello', 'rg -L hello', 'rg --follow hello',
  'rg --hostname-bin=./evil hello', 'rg -f keys/id_ed25519 .', 'rg --file=x y', 'rg --ignore-file x y', 'rg hello /', 'rg hello ..', 'rg hello keys', 'rg secret {home}',
  'rg --unknown-option x', 'rg --pr ./evil x', 'rg -uuL x',
  'grep -R secret .', 'grep -rR secret', 'grep --dereference-recursive x .', 'grep -f keys/id_ed25519 -r .', 'grep -fkeys/id_ed25519 README.md', 'grep --file=x README.md',
  'grep --exclude-from=x -r y', 'grep -r secret ..', 'grep -r secret {home}', 'grep secret /etc/passwd', 'grep -r x /', 'grep --unknown x README.md', 'grep -r secret keys',
  'grep -r x {state}', 'grep --ignore-c x README.md', 'grep -rn x proc-link',
  'git grep -O hello', 'git grep --open-files-in-pager=vi hello', 'git grep --textconv x', 'git grep --no-index x', 'git grep -f x', 'git grep --ext-grep x',
  'git -C /tmp grep x', 'git grep x -- /etc', 'git grep -ofoo x',
  'stat /etc/passwd', 'stat keys/id_ed25519', 'stat --unknown README.md', 'file -C -m x', 'file -m x README.md', 'file -z x.gz', 'file -Z x.gz', 'file -f list',
  'file /etc/passwd', 'file -p README.md', 'file --compile', 'file keys/id_ed25519',
  'du -L', 'du --dereference', 'du --files0-from=x', 'du -X x', 'du --exclude-from=x', 'du /', 'du -sh ..', 'du -sh {home}', 'du keys',
  'df --sync', 'df /', 'df -h ..',
];

/** zsh alone: its own expansions (glob qualifiers, `=cmd`, modifiers, zsh's `~` and `^` globs). */
// prettier-ignore
export const zshHostile: readonly string[] = [
  "ls *(e:'touch /tmp/x':)", 'ls *(+f)', 'cat =(touch x)', 'ls =(ls)', 'ls =ls', 'echo =git', 'ls **/*(.)', 'ls x(N)', 'ls -- *(D)', 'echo ${(e)x}', 'echo $x:h',
  'ls ^foo', 'ls foo#', 'ls (a|b)', 'ls *~x', 'r', 'echo ${~x}', 'ls <->',
  // Black-box round 11: zsh's which is `whence -c`, which prints the person's functions and aliases.
  'which git', 'which -a ls', "which -m '*'", 'whence -c deploy', 'type deploy', 'functions', 'alias',
];

/** zsh's read-only lines: the POSIX ones but `which`, a builtin there that prints shell code. */
export const zshAllowed: readonly string[] = posixAllowed.filter((line) => !line.startsWith('which '));

/** pwsh: lines of literal words that also run there. */
// prettier-ignore
export const pwshAllowed: readonly string[] = [
  'ls', 'ls -la', 'ls -l src', 'ls -a .', 'ls src', "ls 'src'", 'ls "src"', 'ls -1', 'ls -R src', 'ls --group-directories-first', 'ls -d src',
  'ls ./src', 'ls src/', 'ls sub/dir', 'ls -la sub/dir/', "ls 'sub/dir'", 'ls src README.md',
  'pwd', 'pwd -P', 'pwd -L',
  'cat README.md', 'cat ./README.md', "cat 'README.md'", 'cat "README.md"', 'cat src/main.ts', 'cat -n README.md', 'cat -A README.md', 'cat README.md src/main.ts',
  'cat link-inside', 'cat src/../README.md', "cat 'src/main.ts'", 'cat "src/main.ts"',
  'head README.md', 'head -n 5 README.md', 'head -5 README.md', 'head -c 100 README.md',
  'tail README.md', 'tail -n 20 README.md',
  'wc README.md', 'wc -l README.md', 'wc -lc src/main.ts', 'wc -w README.md src/main.ts',
  'echo hello', "echo 'hello world'", 'echo "hello world"', 'echo -n hi', 'echo a b c', 'echo HEAD~1', 'echo x=y', "echo 'a;b'", "echo 'a|b'", "echo '$HOME'",
  "echo 'it*'", "echo '!!'", "echo '@(x)'", "echo '(x)'", "echo '{x}'",
  'which git', 'which -a ls', 'whoami', 'date', 'date -u',
  'git status', 'git status -s', 'git status --short', 'git status --porcelain', 'git status -sb', 'git status src',
  'git diff', 'git diff HEAD~1', 'git diff --stat', 'git diff --cached', 'git diff --name-only HEAD~3', 'git diff main..feature', 'git diff --no-ext-diff',
  'git diff --word-diff', 'git show', 'git show HEAD', 'git show HEAD~2', 'git show --stat HEAD', 'git show HEAD:README.md', 'git show v1.0',
  'git log', 'git log --oneline', 'git log -n 5', 'git log -5 --oneline', 'git log --graph --oneline --all', 'git log main..HEAD',
  'git branch', 'git branch -a', 'git branch -vv', 'git branch --show-current', 'git branch --list', 'git branch -r', 'git branch --merged',
];

/** pwsh: lines that must ask. */
// prettier-ignore
export const pwshHostile: readonly string[] = [
  // Issue 23, attack 8: reads that can change under the agent: following, operands not there yet, FIFOs and devices.
  'tail -f README.md', 'tail -f --retry missing', 'tail --retry README.md', 'tail --follow README.md', 'tail --follow=descriptor README.md', 'tail -qf README.md',
  'cat missing', 'ls missing-but-inside', 'head -n 5 missing', 'cat fifo', 'head fifo', 'wc -l fifo',
  // Class 3 in pwsh: subexpressions, groups, arrays, script blocks, variables, splatting.
  'ls $(touch x)', 'ls (touch x)', 'ls @(touch x)', 'ls { touch x }', 'ls $env:HOME', 'ls $HOME', 'ls @args', 'ls;touch x', 'ls | sh', 'ls && touch x', 'ls || touch x',
  'ls > x', 'ls 2>&1', '& touch x', '. ./x.ps1', 'ls -Path:(touch x)', 'ls a,b', 'ls "$(touch x)"', 'ls "a`$b"', "ls 'a''b'", 'ls --% $x', 'ls #x', 'ls <#x#> a',
  'ls [a]', 'ls *', 'ls ?', 'ls ~', 'cat ~/x', 'ls %', 'ls !x', 'iex x', 'Invoke-Expression x', 'ls \u2018a\u2019', 'ls "a\u201cb"', '$x = 1', 'ls -Path $x',
  'ls `$x', "ls 'unterminated", 'ls "unterminated', 'ls @{a=1}', 'ls $null', 'ls ${x}', 'ls -Filter:$x', 'ls a;', '@(ls)', '(ls)', '{ls}', 'ls $?', 'ls $$',
  'ls "${x}"', 'Remove-Item x', 'Set-Content x y', 'ls\ntouch x', 'ls -la | Out-File x', 'ls -la >> x', 'Start-Process sh',
  // Class 1 and 4 in pwsh.
  'git show --format=x --output=.git/config', 'git diff --output=FILE', 'git log --outp=x', 'git diff --ext-diff', 'git diff --textconv', 'git -C /tmp status',
  'git -c core.fsmonitor=x status', 'git --git-dir=/tmp/x status', 'git --work-tree=/ diff', 'git branch -D main', 'git branch newbranch', 'git push',
  'cat /etc/passwd', 'cat ../outside.txt', 'cat /proc/1/environ', 'head /dev/pts/0', 'cat link-outside', 'cat keys/id_ed25519', 'cat {home}/.ssh/id_ed25519',
  'cat {state}/agents/bridge.token', 'ls /', 'ls ..', 'git status /etc', 'tail -F README.md', 'date -s 2020-01-01',
];

/**
 * pwsh lines that are harmless but ask: tree-sitter's PowerShell grammar reports errors for
 * `--name=value`, `-n5` and `--` (README, Known limitations). Asking is the safe side.
 */
// prettier-ignore
export const pwshAskConservatively: readonly string[] = [
  'ls -lh --color=auto', 'head -n5 README.md', 'tail --lines=3 README.md', 'date --iso-8601', 'git status --untracked-files=no', 'git diff -U3',
  'git log --since=2.weeks', 'git log --author=alice', 'git diff HEAD~1 -- src', 'ls -- src',
];
