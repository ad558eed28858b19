import { describe, expect, it } from 'vitest';
import { answerDynamicColor, answerIndexedColor, rgbSpec } from '../../src/main/terminal/emulator/color-queries.js';
import { Emulator } from '../../src/main/terminal/emulator/emulator.js';
import { colorOf, palettes } from '../../src/shared/palette.js';

const dark = palettes.dark;
const light = palettes.light;

describe('colour queries', () => {
  it('formats colours as xterm reports them', () => {
    expect(rgbSpec('#0f1115')).toBe('rgb:0f0f/1111/1515');
  });

  it('answers OSC 10, 11 and 12, chained ones too, and ignores colours being set', () => {
    expect(answerDynamicColor(11, '?', light)).toEqual(['\x1b]11;rgb:fafa/fafa/fafa\x1b\\']);
    expect(answerDynamicColor(10, '?;?', dark)).toEqual(['\x1b]10;rgb:d4d4/d7d7/dddd\x1b\\', '\x1b]11;rgb:0f0f/1111/1515\x1b\\']);
    expect(answerDynamicColor(12, '?;?', dark)).toEqual(['\x1b]12;rgb:e8e8/eaea/eeee\x1b\\']);
    expect(answerDynamicColor(11, '#ffffff', dark)).toBeNull();
  });

  it('answers OSC 4 for the 256-colour table', () => {
    expect(answerIndexedColor('1;?', dark)).toEqual(['\x1b]4;1;rgb:e0e0/6c6c/7575\x1b\\']);
    expect(answerIndexedColor('1;#000000;196;?', dark)).toEqual(['\x1b]4;196;rgb:ffff/0000/0000\x1b\\']);
    expect(answerIndexedColor('256;?', dark)).toBeNull();
    expect(colorOf(dark, 16)).toBe('#000000');
    expect(colorOf(dark, 231)).toBe('#ffffff');
    expect(colorOf(dark, 232)).toBe('#080808');
    expect(colorOf(dark, 255)).toBe('#eeeeee');
  });

  it("are answered by the host's emulator from the palette of the moment, in order with other replies", async () => {
    const replies: string[] = [];
    let palette = dark;
    const e = new Emulator({ cols: 80, rows: 24, scrollback: 0, onReply: (data) => replies.push(data), palette: () => palette });
    e.feed('\x1b]11;');
    expect(e.mustDrainBeforeInput).toBe(true);
    e.feed('?\x07\x1b[6n');
    await e.drained();
    palette = light;
    e.feed('\x1b]11;?\x1b\\');
    await e.drained();
    expect(replies).toEqual(['\x1b]11;rgb:0f0f/1111/1515\x1b\\', '\x1b[1;1R', '\x1b]11;rgb:fafa/fafa/fafa\x1b\\']);
    e.dispose();
  });

  it('stay unanswered without a palette (as before)', async () => {
    const replies: string[] = [];
    const e = new Emulator({ cols: 80, rows: 24, scrollback: 0, onReply: (data) => replies.push(data) });
    e.feed('\x1b]11;?\x07');
    await e.drained();
    expect(replies).toEqual([]);
    e.dispose();
  });
});
