/** What a tab says and where it sits: titles, numbering of look-alikes, order, agent colours. */
import { describe, expect, it } from 'vitest';
import { agentLook } from '../../src/renderer/src/lib/agent-colour.js';
import { LabelMemory, lastFolder, programQuoted, tabTitle, tabTitles } from '../../src/renderer/src/lib/tab-title.js';
import { plainText } from '../../src/renderer/src/lib/notifier.js';
import { moveTo, sortByOrder } from '../../src/renderer/src/lib/tab-order.js';

const base = { id: 'a', title: 'bash', shell: 'bash', program: null as string | null, cwd: '/home/me/src/tandem' as string | null };

describe('tab titles', () => {
  it('names a default-titled tab by its program, else its folder; a chosen title leads', () => {
    expect(tabTitle(base, '/home/me')).toEqual({ label: 'tandem', detail: null });
    expect(tabTitle({ ...base, program: 'vim' }, '/home/me')).toEqual({ label: 'tandem', detail: 'vim' });
    // A program's own title is never the label (Tandem's words): cleaned of control and bidi characters, bounded, as the detail.
    expect(tabTitle({ ...base, program: '(approved)\u202e rm\x1b[31m -rf\u200b\n' }, '/home/me')).toEqual({
      label: 'tandem',
      detail: '(approved) rm [31m -rf',
    });
    expect(tabTitle({ ...base, program: 'x'.repeat(500) }, '/home/me').detail).toHaveLength(48);
    expect(tabTitle({ ...base, program: '\u202e\u2066 \x07' }, '/home/me')).toEqual({ label: 'tandem', detail: null });
    expect(tabTitle({ ...base, cwd: '/home/me' }, '/home/me')).toEqual({ label: '~', detail: null });
    expect(tabTitle({ ...base, cwd: null }, null)).toEqual({ label: 'bash', detail: null });
    expect(tabTitle({ ...base, title: 'deploy', program: 'ssh' }, null)).toEqual({ label: 'deploy', detail: 'ssh' });
    expect(lastFolder('/', null)).toBe('/');
    expect(lastFolder('C:\\Users\\me\\proj', null)).toBe('proj');
  });

  it('numbers tabs that would read the same, from the second on', () => {
    const titles = tabTitles([base, { ...base, id: 'b' }, { ...base, id: 'c', cwd: '/srv' }, { ...base, id: 'd' }], '/home/me', new LabelMemory());
    expect([titles.a!.label, titles.b!.label, titles.c!.label, titles.d!.label]).toEqual(['tandem', 'tandem (2)', 'srv', 'tandem (3)']);
  });

  it('never renumbers a tab because another one changed or closed (issue 28)', () => {
    const memory = new LabelMemory();
    const home = { ...base, cwd: '/home/me' };
    const labels = (list: (typeof base)[]): string[] => Object.values(tabTitles(list, '/home/me', memory)).map((title) => title.label);
    const [a, b, c] = [home, { ...home, id: 'b' }, { ...home, id: 'c' }];
    expect(labels([a, b, c])).toEqual(['~', '~ (2)', '~ (3)']);
    // A tab starts a program (or sets its title): no tab is renumbered, the label stays Tandem's.
    expect(labels([a, { ...b, program: 'vim' }, c])).toEqual(['~', '~ (2)', '~ (3)']);
    // A tab closes: the others keep their numbers; a new look-alike takes the lowest free one.
    expect(labels([{ ...b, program: 'vim' }, c])).toEqual(['~ (2)', '~ (3)']);
    expect(labels([{ ...b, program: 'vim' }, c, { ...home, id: 'd' }])).toEqual(['~ (2)', '~ (3)', '~']);
    expect(labels([b, c, { ...home, id: 'd' }])).toEqual(['~ (2)', '~ (3)', '~']);
    // Reordering changes nothing.
    expect(labels([c, { ...home, id: 'd' }, b])).toEqual(['~ (3)', '~', '~ (2)']);
  });
});

describe('tab order', () => {
  const tabs = ['a', 'b', 'c', 'd'].map((id) => ({ id }));
  it('keeps the remembered order and puts new tabs at the end', () => {
    expect(sortByOrder(['c', 'a', 'gone'], tabs).map((tab) => tab.id)).toEqual(['c', 'a', 'b', 'd']);
  });
  it('moves a tab to an index among the others', () => {
    expect(moveTo(tabs, 'a', 2).map((tab) => tab.id)).toEqual(['b', 'c', 'a', 'd']);
    expect(moveTo(tabs, 'd', 0).map((tab) => tab.id)).toEqual(['d', 'a', 'b', 'c']);
    expect(moveTo(tabs, 'b', 99).map((tab) => tab.id)).toEqual(['a', 'c', 'd', 'b']);
    expect(moveTo(tabs, 'x', 0)).toEqual(tabs);
  });
});

describe('agent colours', () => {
  it('derives a stable colour and mark from the name alone, and tells similar names apart', () => {
    expect(agentLook('claude-code')).toEqual(agentLook('claude-code'));
    expect(agentLook('claude-code').mark).toBe('CC');
    expect(agentLook('codex').mark).toBe('C');
    const hues = new Set(['agent-1', 'agent-2', 'agent-3', 'agent-4'].map((name) => agentLook(name).hue));
    expect(hues.size).toBeGreaterThan(1);
  });
});

describe("a program's own title (issue 23, attack 11)", () => {
  it("reads as the program's: quoted and named, with no control or bidi character, bounded", () => {
    expect(programQuoted('(approved) rm -rf')).toBe('program: \u201c(approved) rm -rf\u201d');
    expect(programQuoted('\u2067needs you\u2069\u0007')).toBe('program: \u201cneeds you\u201d');
    expect(programQuoted('\u200b')).toBeNull();
    expect(programQuoted(null)).toBeNull();
  });

  it('notifications carry no control, bidi or line-separator characters', () => {
    expect(plainText('a\u202eb\u2028c\x1b[1m\r\nd', 200)).toBe('ab c [1m d');
    expect(plainText('x'.repeat(300), 200)).toHaveLength(200);
    expect(plainText('printf x\r\nin \u202ecodex\x07', 500, true)).toBe('printf x\nin codex');
  });
});
