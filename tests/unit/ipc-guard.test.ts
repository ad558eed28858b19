import { describe, expect, it } from 'vitest';
import { isTrustedSender } from '../../src/main/electron/ipc-guard';

const fileEntry = 'file:///opt/Tandem/resources/app.asar/out/renderer/index.html';
const devServer = 'http://localhost:5173';

describe('isTrustedSender', () => {
  it('trusts the built renderer page, with or without a query or hash', () => {
    expect(isTrustedSender({ url: fileEntry }, fileEntry)).toBe(true);
    expect(isTrustedSender({ url: `${fileEntry}#/tabs/3` }, fileEntry)).toBe(true);
    expect(isTrustedSender({ url: `${fileEntry}?view=settings` }, fileEntry)).toBe(true);
  });

  it('trusts any page of the dev server origin', () => {
    expect(isTrustedSender({ url: 'http://localhost:5173/' }, devServer)).toBe(true);
    expect(isTrustedSender({ url: 'http://localhost:5173/index.html' }, devServer)).toBe(true);
  });

  it('rejects a missing frame', () => {
    expect(isTrustedSender(null, fileEntry)).toBe(false);
    expect(isTrustedSender(undefined, fileEntry)).toBe(false);
  });

  it('rejects other file URLs, including ones that only share a string prefix', () => {
    expect(isTrustedSender({ url: 'file:///tmp/evil.html' }, fileEntry)).toBe(false);
    expect(isTrustedSender({ url: `${fileEntry}.evil.html` }, fileEntry)).toBe(false);
    expect(isTrustedSender({ url: 'file:///opt/Tandem/resources/app.asar/out/renderer/index.htm' }, fileEntry)).toBe(false);
  });

  it('rejects paths that climb out of the trusted one', () => {
    const base = 'file:///opt/Tandem/out/renderer/';
    expect(isTrustedSender({ url: `${base}index.html` }, base)).toBe(true);
    expect(isTrustedSender({ url: `${base}../../../tmp/evil.html` }, base)).toBe(false);
    expect(isTrustedSender({ url: `${base}%2e%2e/%2e%2e/evil.html` }, base)).toBe(false);
  });

  it('rejects look-alike hosts, other ports, schemes and embedded credentials', () => {
    expect(isTrustedSender({ url: 'http://localhost:51730/' }, devServer)).toBe(false);
    expect(isTrustedSender({ url: 'http://localhost:5173.evil.test/' }, devServer)).toBe(false);
    expect(isTrustedSender({ url: 'http://localhost:5174/' }, devServer)).toBe(false);
    expect(isTrustedSender({ url: 'https://localhost:5173/' }, devServer)).toBe(false);
    expect(isTrustedSender({ url: 'http://evil@localhost:5173/' }, devServer)).toBe(false);
    expect(isTrustedSender({ url: 'http://127.0.0.1:5173/' }, devServer)).toBe(false);
  });

  it('rejects blank, about: and unparsable URLs', () => {
    expect(isTrustedSender({ url: '' }, fileEntry)).toBe(false);
    expect(isTrustedSender({ url: 'about:blank' }, fileEntry)).toBe(false);
    expect(isTrustedSender({ url: 'not a url' }, devServer)).toBe(false);
    expect(isTrustedSender({ url: devServer }, 'not a url')).toBe(false);
  });
});
