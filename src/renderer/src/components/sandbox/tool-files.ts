/** Which of the person's own tools runs a file a confined agent changed (src/main/sandbox/tool-files.ts), in a few words. */
export function toolThatRuns(path: string): string {
  if (path === '.envrc' || path.startsWith('.envrc')) return 'direnv runs it when you enter the folder';
  if (path.startsWith('.vscode')) return 'VS Code runs its tasks and settings';
  if (path.startsWith('.idea')) return 'JetBrains IDEs run its run configurations';
  if (path.startsWith('.devcontainer')) return 'Dev Containers build and run it';
  if (path === '.nvim.lua' || path === '.exrc' || path === '.lvimrc') return 'your editor runs it (exrc)';
  if (path === '.git' || path.endsWith('/.git') || path.startsWith('.git/')) return 'your git status runs git with its config';
  return 'your tools may run it';
}
