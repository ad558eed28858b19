import type { Terminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { PersonSpans, personNotice } from '../../src/main/terminal/session/person-spans.js';

/** A stream as the session keeps it (a string here), with the spans over it; the view is a real headless xterm.js. */
function setup() {
  let stream = '';
  const spans = new PersonSpans({
    cols: () => 40,
    rows: () => 8,
    scrollback: 200,
    // As if the shared emulator had parsed nothing yet: the view is built from the stream alone.
    serialize: () => ({ data: '', offset: 0 }),
    slice: (from, to) => stream.slice(from, to),
    offset: () => stream.length,
  });
  const print = (text: string) => (stream += text);
  const lines = async (): Promise<string[]> => {
    const view = (await spans.agentBuffer()) as Terminal;
    const buffer = view.buffer.active;
    const all: string[] = [];
    for (let y = 0; y < buffer.length; y++) all.push(buffer.getLine(y)?.translateToString(true) ?? '');
    return all;
  };
  return { spans, print, lines, offset: () => stream.length };
}

describe("the person's private output", () => {
  it('never reaches the agents’ view, whatever the agent prints afterwards or however the terminal is resized', async () => {
    const { spans, print, lines, offset } = setup();
    print('agent-1\r\n');
    expect(await spans.agentBuffer()).toBeNull();
    spans.begin(offset());
    print('person-secret-1\r\nperson-secret-2 with a line long enough to wrap at forty columns\r\n');
    expect((await lines()).join('\n')).not.toContain('secret');
    expect((await lines()).join('')).toContain(personNotice);
    spans.end(offset(), false);
    print('agent-2\r\n');
    // Reverse index at the top, a scroll region, inserted lines, a resize that reflows: none has anything to show.
    print('\x1b[H\x1bM\x1bM\x1bM\x1b[2;6r\x1b[6;1H\n\n\x1b[r\x1b[2L\x1b[8;1H');
    spans.resize(20, 8);
    spans.resize(60, 12);
    const shown = (await lines()).join('\n');
    expect(shown).not.toContain('secret');
    expect(shown).toContain('agent-1');
    expect(shown).toContain('agent-2');
    expect(spans.redactStream(0, offset())).not.toContain('secret');
    expect(spans.redactStream(0, offset())).toContain(personNotice);
  });

  it('shows a lease shared on hand-back, and only that one', async () => {
    const { spans, print, lines, offset } = setup();
    spans.begin(offset());
    print('private-one\r\n');
    spans.end(offset(), false);
    await lines();
    spans.begin(offset());
    print('shared-two\r\n');
    expect((await lines()).join('\n')).not.toContain('shared-two');
    spans.end(offset(), true);
    const shown = (await lines()).join('\n');
    expect(shown).toContain('shared-two');
    expect(shown).not.toContain('private-one');
    expect(spans.redactStream(0, offset())).toContain('shared-two');
  });

  it('keeps at most 32 leases, merging the oldest (which hides more, never less), and clears where the person cleared', async () => {
    const { spans, print, lines, offset } = setup();
    for (let lease = 0; lease < 100; lease++) {
      print(`agent-${lease}\r\n`);
      spans.begin(offset());
      print(`person-${lease}\r\n`);
      spans.end(offset(), false);
      expect(spans.sizes.streams).toBeLessThanOrEqual(32);
    }
    expect(spans.redactStream(0, offset())).not.toMatch(/person-\d/);
    expect((await lines()).join('\n')).not.toMatch(/person-\d/);
    spans.clear(offset());
    print('after-clear\r\n');
    const shown = (await lines()).filter((line) => line !== '');
    expect(shown).toEqual(['after-clear']);
  });
});
