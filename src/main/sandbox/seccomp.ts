/**
 * The seccomp filter of a confined terminal, as classic BPF for bubblewrap's `--seccomp FD`.
 * It refuses terminal input injection: `ioctl(fd, TIOCSTI)` pushes bytes into the terminal's
 * input queue, so a process inside could type commands into whatever reads the terminal after
 * it (and the kernel's `legacy_tiocsti` setting is the machine's, not Tandem's). TIOCLINUX is
 * refused for the same reason (it can paste on a virtual console).
 *
 * Hard links are refused too (EPERM; git, pnpm and cp fall back to a rename or a copy). The
 * person's own git writes `.git/config.lock` in the `.git` folder the agent may write, then renames
 * it over `config`: a link made to the lock, or to `config` in the moment its read-only mount is
 * down (mount-guard.ts), was a writable second name of the live config for as long as it lasted
 * (black-box round 2: a `core.fsmonitor` written through it ran in the person's `git status`).
 *
 * io_uring is refused (ENOSYS, as on a kernel without it: libuv and the rest fall back to plain
 * syscalls): its requests run in the kernel without passing this filter, so `IORING_OP_LINKAT`
 * made the hard link the filter refuses (black-box round 4), and any call refused here would
 * have the same way around. The kernel's keyrings are refused too (ENOSYS, as on a kernel built
 * without them, which programs and runtimes handle): bubblewrap gives the
 * sandbox no session keyring of its own, so a confined program read and replaced the keys of
 * the person's login session (a Kerberos ticket cache, `keyctl padd` secrets) and the user's
 * keyring every process of theirs shares.
 *
 * The request is compared on its low 32 bits only: the kernel takes `unsigned int cmd`, so a
 * filter comparing 64 bits would be passed by a request with high bits set. Syscalls of an
 * unknown architecture, and x32 syscalls on x86-64, are refused outright: a filter that checks
 * one table of syscall numbers must not let another table through.
 */

/**
 * Linux audit architecture values and, in each table, the ioctl syscall number, the hard link
 * calls (`link`, `linkat`; arm64 has only `linkat`) and the keyring calls (`add_key`,
 * `request_key`, `keyctl`). io_uring's three calls have the same numbers in every table.
 */
const arches = {
  x64: { audit: 0xc000003e, ioctl: 16, links: [86, 265], keys: [248, 249, 250], x32Bit: true },
  ia32: { audit: 0x40000003, ioctl: 54, links: [9, 303], keys: [286, 287, 288], x32Bit: false },
  arm64: { audit: 0xc00000b7, ioctl: 29, links: [37], keys: [217, 218, 219], x32Bit: false },
  arm: { audit: 0x40000028, ioctl: 54, links: [9, 330], keys: [309, 310, 311], x32Bit: false },
} as const;

/** `io_uring_setup`, `io_uring_enter`, `io_uring_register`. */
export const ioUringCalls = [425, 426, 427] as const;

export type FilterArch = keyof typeof arches;

/** The ABIs a process on this machine architecture can call the kernel through. */
export function abisOf(machine: string): FilterArch[] {
  if (machine === 'x64') return ['x64', 'ia32'];
  if (machine === 'arm64') return ['arm64', 'arm'];
  throw new Error(`no seccomp filter for architecture ${machine}`);
}

export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
export const LD_W_ABS = 0x20;
export const JEQ_K = 0x15;
export const JGE_K = 0x35;
export const RET_K = 0x06;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_ERRNO = 0x00050000;

/** struct seccomp_data offsets: nr, arch, then args[6] as u64 from 16 (low word first, little-endian). */
export const OFF_NR = 0;
export const OFF_ARCH = 4;
export const OFF_ARG1_LOW = 24;

export interface Insn {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

type Draft = { code: number; k: number; jt?: string; jf?: string; at?: string };

/** The program as instructions; jumps are resolved from labels (relative, forward only). */
export function sandboxProgram(abis: readonly FilterArch[]): Insn[] {
  const draft: Draft[] = [{ code: LD_W_ABS, k: OFF_ARCH }];
  abis.forEach((abi, i) => draft.push({ code: JEQ_K, k: arches[abi].audit, jt: `abi${i}` }));
  draft.push({ code: RET_K, k: SECCOMP_RET_ERRNO | EPERM });
  abis.forEach((abi, i) => {
    draft.push({ code: LD_W_ABS, k: OFF_NR, at: `abi${i}` });
    if (arches[abi].x32Bit) draft.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: 'deny' });
    for (const nr of arches[abi].links) draft.push({ code: JEQ_K, k: nr, jt: 'deny' });
    for (const nr of [...arches[abi].keys, ...ioUringCalls]) draft.push({ code: JEQ_K, k: nr, jt: 'absent' });
    draft.push({ code: JEQ_K, k: arches[abi].ioctl, jt: 'request', jf: 'allow' });
  });
  draft.push({ code: LD_W_ABS, k: OFF_ARG1_LOW, at: 'request' });
  draft.push({ code: JEQ_K, k: TIOCSTI, jt: 'deny' });
  draft.push({ code: JEQ_K, k: TIOCLINUX, jt: 'deny' });
  draft.push({ code: RET_K, k: SECCOMP_RET_ALLOW, at: 'allow' });
  draft.push({ code: RET_K, k: SECCOMP_RET_ERRNO | EPERM, at: 'deny' });
  draft.push({ code: RET_K, k: SECCOMP_RET_ERRNO | ENOSYS, at: 'absent' });
  const labels = new Map(draft.flatMap((insn, index) => (insn.at ? [[insn.at, index] as const] : [])));
  const offset = (from: number, label: string | undefined) => {
    if (label === undefined) return 0;
    const to = labels.get(label)!;
    const jump = to - from - 1;
    if (jump < 0 || jump > 255) throw new Error(`seccomp jump to ${label} out of range`);
    return jump;
  };
  return draft.map((insn, index) => ({ code: insn.code, jt: offset(index, insn.jt), jf: offset(index, insn.jf), k: insn.k >>> 0 }));
}

/** The program as `struct sock_filter[]` bytes in the machine's (little-endian) order. */
export function encodeProgram(program: readonly Insn[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    bytes.writeUInt16LE(insn.code, i * 8);
    bytes.writeUInt8(insn.jt, i * 8 + 2);
    bytes.writeUInt8(insn.jf, i * 8 + 3);
    bytes.writeUInt32LE(insn.k, i * 8 + 4);
  });
  return bytes;
}

/** The filter bubblewrap reads from `--seccomp FD` on this machine. */
export function sandboxFilter(machine: string = process.arch): Buffer {
  return encodeProgram(sandboxProgram(abisOf(machine)));
}

export { arches as seccompArches };
