/**
 * The Electron transport of the contract: every operation of the contract's table becomes an
 * `ipcMain.handle('tandem:<op>')` handler, and events go to the page with
 * `webContents.send('tandem:event', {event, payload})`. Handlers never throw across IPC:
 * they resolve with `{ok: true, value}` or `{ok: false, error: {code, message}}`.
 *
 * Each handler first checks that the message comes from the app's own page
 * (`isTrustedSender` on `event.senderFrame`, and the top frame). One `Dispatcher` (one UI
 * client) per webContents, created on its first call; it is disposed (its views detached,
 * never a process stopped) when the webContents is destroyed or loads a new page.
 *
 * Electron's objects come in as parameters (the `*Like` interfaces below) so a test can run
 * the transport against an in-process stand-in; this module does not import electron.
 */
import { type EventName, type EventPayload, opNames } from '../../shared/contract.js';
import { type DispatchOptions, Dispatcher, newClientId, toWireError, type UiClient } from '../host/dispatch.js';
import type { TerminalHost } from '../host/host.js';
import { EventGate } from '../web/event-gate.js';
import { type IpcEventMessage, ipcEventChannel, ipcOpChannel, type IpcReply } from '../../shared/wire.js';
import { isTrustedSender, type SenderFrame } from './ipc-guard.js';

/** The part of Electron's WebContents the transport uses. */
export interface WebContentsLike {
  readonly id: number;
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  once(event: 'destroyed', listener: () => void): unknown;
  on(event: 'did-navigate', listener: (...args: unknown[]) => void): unknown;
}

/** The part of Electron's IpcMainInvokeEvent the transport uses. */
export interface IpcInvokeEventLike {
  sender: WebContentsLike;
  /** Null once the frame navigated away or was destroyed. `parent` is null for a top frame. */
  senderFrame: (SenderFrame & { parent?: unknown }) | null;
}

/** The part of Electron's ipcMain the transport uses. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: IpcInvokeEventLike, ...args: unknown[]) => Promise<IpcReply>): void;
  removeHandler(channel: string): void;
}

export interface IpcTransportOptions {
  ipcMain: IpcMainLike;
  host: TerminalHost;
  /** Passed to each page's Dispatcher. */
  dispatch?: DispatchOptions;
  /**
   * The page allowed to call: the built renderer's file URL, or the dev server's URL (see
   * `isTrustedSender`). A function is read on every call.
   */
  trustedUrl: string | (() => string);
}

interface Connected {
  dispatcher: Dispatcher;
  gate: EventGate;
}

export interface IpcTransport {
  /** Removes the handlers and disposes every page's client. */
  dispose(): void;
  /** Pages with a live client (tests and diagnostics). */
  readonly clients: number;
}

const refused: IpcReply = {
  ok: false,
  error: { code: 'forbidden', message: "This request did not come from Tandem's own window and was refused." },
};

export function installIpcTransport(opts: IpcTransportOptions): IpcTransport {
  const connected = new Map<number, Connected>();
  const watched = new Set<number>();

  const release = (id: number): void => {
    const entry = connected.get(id);
    if (!entry) return;
    connected.delete(id);
    entry.gate.clear();
    entry.dispatcher.dispose();
  };

  const clientFor = (contents: WebContentsLike): Connected => {
    const existing = connected.get(contents.id);
    if (existing) return existing;
    if (!watched.has(contents.id)) {
      // Once per webContents: a reload or a new page drops the old page's views (their
      // processes stay); a destroyed webContents drops them for good.
      watched.add(contents.id);
      contents.on('did-navigate', () => release(contents.id));
      contents.once('destroyed', () => {
        watched.delete(contents.id);
        release(contents.id);
      });
    }
    const gate = new EventGate((event, payload) => {
      if (contents.isDestroyed()) return;
      const message: IpcEventMessage = { event, payload };
      contents.send(ipcEventChannel, message);
    });
    const client: UiClient = {
      id: newClientId(),
      send<K extends EventName>(event: K, payload: EventPayload<K>): void {
        gate.send(event, payload);
      },
    };
    const entry: Connected = { dispatcher: new Dispatcher(opts.host, client, opts.dispatch), gate };
    connected.set(contents.id, entry);
    return entry;
  };

  const trusted = (event: IpcInvokeEventLike): boolean => {
    const frame = event.senderFrame;
    if (!frame || (frame.parent !== undefined && frame.parent !== null)) return false;
    const url = typeof opts.trustedUrl === 'function' ? opts.trustedUrl() : opts.trustedUrl;
    return isTrustedSender(frame, url);
  };

  for (const op of opNames) {
    opts.ipcMain.handle(ipcOpChannel(op), async (event, args): Promise<IpcReply> => {
      try {
        if (!trusted(event) || event.sender.isDestroyed()) return refused;
        const entry = clientFor(event.sender);
        const resume = op === 'attach' && entry.dispatcher.holdsAttach(args) ? entry.gate.hold() : null;
        try {
          const value = await entry.dispatcher.call(op, args);
          if (op === 'attach' && connected.get(event.sender.id) !== entry) {
            // The page reloaded or went away while attaching: no orphan view may keep input.
            opts.host.detach((value as { attachmentId: string }).attachmentId);
            return { ok: false, error: { code: 'not_found', message: 'The page changed while attaching; attach again.' } };
          }
          return { ok: true, value };
        } finally {
          // The reply is sent once this handler's promise settles: queued frames follow it.
          if (resume) setImmediate(resume);
        }
      } catch (error) {
        return { ok: false, error: toWireError(error) };
      }
    });
  }

  return {
    dispose() {
      for (const op of opNames) opts.ipcMain.removeHandler(ipcOpChannel(op));
      for (const id of [...connected.keys()]) release(id);
    },
    get clients() {
      return connected.size;
    },
  };
}
