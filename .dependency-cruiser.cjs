/**
 * Tandem's layer rules, checked by `npm test` (`depcruise src`): every import obeys them, with no
 * list of known exceptions.
 *
 * The picture (docs/architecture.md, "Layers and how they are checked"): data flows down, a
 * module may import its own layer or any layer below it, never one above.
 *
 *   0  src/shared                                   the contract: imports nothing of ours
 *   1  src/main/{resources,state-dir,version,clock,tcp-table}.ts, launch/  leaf helpers
 *   2  src/main/{pty,shells,sandbox}                the platform, shell dialects, confinement
 *   3  src/main/{terminal,record}                   one terminal; what happened as data
 *   4  src/main/host                                registry, control machine, op queue
 *   5  src/main/{agent,web,remote,electron}         the edges: MCP, tandem serve, machines, IPC
 *   6  src/main/{index,cli,runtime}.ts              composition roots: wire everything
 *
 * Besides the ranks: the agent reaches terminals only through the host (never terminal/ or pty/),
 * and there only through its ports (TerminalPort, AgentHost; ESLint names TerminalHost too);
 * the transports (web, remote, electron) never import the agent layer; only the Electron shell
 * (src/main/electron, src/main/index.ts, src/preload) imports `electron`; the renderer never
 * imports main or preload; preload imports only shared; no import circles.
 */

/** Layers, lowest first; each entry is a path regex (dependency-cruiser matches from the repo root). */
const layers = [
  { name: 'shared', path: '^src/shared/' },
  { name: 'leaf', path: '^src/main/(resources|state-dir|version|clock|tcp-table)\\.ts$|^src/main/launch/' },
  { name: 'platform', path: '^src/main/(pty|shells|sandbox)/' },
  { name: 'terminal', path: '^src/main/(terminal|record)/' },
  { name: 'host', path: '^src/main/host/' },
  { name: 'edge', path: '^src/main/(agent|web|remote|electron)/' },
  { name: 'root', path: '^src/main/(index|cli|runtime)\\.ts$' },
];

/** One rule per layer: nothing in it imports a layer above it. */
const upward = layers.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}-imports-upward`,
  comment: `src layer "${layer.name}" imports a layer above it (${layers
    .slice(i + 1)
    .map((l) => l.name)
    .join(', ')}): data flows down, so move the shared piece down instead`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: layers.slice(i + 1).map((l) => l.path) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'agent-only-through-host',
      comment: 'the agent layer asks the host for outcomes; it never reaches src/main/terminal or src/main/pty (ARCHITECTURE.md: one port per layer boundary)',
      severity: 'error',
      from: { path: '^src/main/agent/' },
      to: { path: '^src/main/(terminal|pty)/' },
    },
    {
      name: 'agent-only-through-port',
      comment:
        'the agent layer reaches a terminal through its TerminalPort (host/terminal-port.ts) and the host through AgentHost (host/host.ts); never the managed terminal, its control machine, queue or ops class',
      severity: 'error',
      from: { path: '^src/main/agent/' },
      to: { path: '^src/main/host/', pathNot: '^src/main/host/(host|terminal-port|dispatch|instance|instance-proof|discovery)\\.ts$' },
    },
    {
      name: 'transport-imports-agent',
      comment: 'web, remote and electron carry the contract to the host; the agent layer is wired in by the composition roots',
      severity: 'error',
      from: { path: '^src/main/(web|remote|electron)/' },
      to: { path: '^src/main/agent/' },
    },
    {
      name: 'electron-outside-shell',
      comment: 'only src/main/electron, src/main/index.ts and src/preload import electron, so the host runs in tandem serve and tests',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/main/electron/|^src/main/index\\.ts$|^src/preload/' },
      to: { path: '^electron$|node_modules/electron/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'edge-imports-electron-shell',
      comment: 'nothing but the composition root imports src/main/electron',
      severity: 'error',
      from: { path: '^src/main/', pathNot: '^src/main/(electron/|index\\.ts$)' },
      to: { path: '^src/main/electron/' },
    },
    {
      name: 'renderer-imports-main',
      comment: 'the renderer talks to the host only through TandemApi (IPC or WebSocket) and src/shared',
      severity: 'error',
      from: { path: '^src/renderer/' },
      to: { path: '^src/(main|preload)/' },
    },
    {
      name: 'preload-imports-beyond-shared',
      comment: 'the preload bridge imports only src/shared',
      severity: 'error',
      from: { path: '^src/preload/' },
      to: { path: '^src/(main|renderer)/' },
    },
    {
      name: 'main-imports-renderer',
      comment: 'main never imports the renderer or preload',
      severity: 'error',
      from: { path: '^src/main/' },
      to: { path: '^src/(renderer|preload)/' },
    },
    {
      name: 'no-circular',
      comment: 'an import circle: split out what both sides need',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)out/|\\.d\\.ts$' },
    // type-only imports count: a layer that needs another's types depends on it
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.svelte', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
