/** What a recorder is opened with in the recording tests: an agent's bash terminal unless `extra` says otherwise. */
export function recordingMeta(terminalId: string, extra: Partial<{ title: string; origin: 'agent' | 'user'; agent: string | null }> = {}) {
  return {
    terminalId,
    title: 't',
    origin: 'agent' as 'agent' | 'user',
    agent: 'a' as string | null,
    shell: 'bash',
    cwd: '/w',
    cols: 80,
    rows: 24,
    sandbox: null,
    ...extra,
  };
}
