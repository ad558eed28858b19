import { describe, expect, it } from 'vitest';
import {
  abisOf,
  encodeProgram,
  ioUringCalls,
  type Insn,
  JEQ_K,
  JGE_K,
  LD_W_ABS,
  OFF_ARCH,
  OFF_NR,
  RET_K,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  seccompArches,
  TIOCLINUX,
  TIOCSTI,
  sandboxFilter,
  sandboxProgram,
} from '../../src/main/sandbox/seccomp.js';

/** A reference interpreter of the classic BPF subset the filter uses, as the kernel runs it. */
function run(program: readonly Insn[], call: { arch: number; nr: number; args?: bigint[] }): number {
  const word = (offset: number): number => {
    if (offset === OFF_NR) return call.nr >>> 0;
    if (offset === OFF_ARCH) return call.arch >>> 0;
    const arg = call.args?.[Math.floor((offset - 16) / 8)] ?? 0n;
    return Number(offset % 8 === 0 ? arg & 0xffffffffn : (arg >> 32n) & 0xffffffffn);
  };
  let acc = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const insn = program[pc]!;
    if (insn.code === LD_W_ABS) acc = word(insn.k);
    else if (insn.code === JEQ_K) pc += acc === insn.k ? insn.jt : insn.jf;
    else if (insn.code === JGE_K) pc += acc >= insn.k ? insn.jt : insn.jf;
    else if (insn.code === RET_K) return insn.k;
    else throw new Error(`unknown opcode ${insn.code}`);
  }
  throw new Error('fell off the end');
}

const EPERM = SECCOMP_RET_ERRNO | 1;
const ENOSYS = SECCOMP_RET_ERRNO | 38;

describe('the sandbox seccomp filter (TIOCSTI, TIOCLINUX, hard links, keyrings, io_uring)', () => {
  const x64 = sandboxProgram(abisOf('x64'));
  const { audit: X64, ioctl: IOCTL } = seccompArches.x64;
  /** Each ABI table with the program that checks it (a 64-bit machine's program covers its 32-bit table). */
  const everyTable = [
    ['x64', x64],
    ['ia32', x64],
    ['arm64', sandboxProgram(abisOf('arm64'))],
    ['arm', sandboxProgram(abisOf('arm64'))],
  ] as const;

  it('refuses TIOCSTI and TIOCLINUX and allows other ioctls and syscalls', () => {
    expect(run(x64, { arch: X64, nr: IOCTL, args: [0n, BigInt(TIOCSTI)] })).toBe(EPERM);
    expect(run(x64, { arch: X64, nr: IOCTL, args: [0n, BigInt(TIOCLINUX)] })).toBe(EPERM);
    expect(run(x64, { arch: X64, nr: IOCTL, args: [0n, 0x5401n] })).toBe(SECCOMP_RET_ALLOW); // TCGETS
    expect(run(x64, { arch: X64, nr: 0, args: [0n, BigInt(TIOCSTI)] })).toBe(SECCOMP_RET_ALLOW); // read
  });

  it('refuses hard links in every table (link and linkat), and nothing else near them', () => {
    for (const [abi, program] of everyTable) {
      const table = seccompArches[abi];
      for (const nr of table.links) expect(run(program, { arch: table.audit, nr, args: [] }), `${abi} ${nr}`).toBe(EPERM);
      // symlink stays allowed (x64 88, symlinkat 266; arm64 symlinkat 36), and rename (x64 82).
      for (const nr of abi === 'x64' ? [88, 266, 82] : abi === 'arm64' ? [36, 38] : [])
        expect(run(program, { arch: table.audit, nr, args: [] }), `${abi} ${nr}`).toBe(SECCOMP_RET_ALLOW);
    }
  });

  it('refuses the keyring calls and io_uring (ENOSYS, as a kernel without them) in every table', () => {
    for (const [abi, program] of everyTable) {
      const table = seccompArches[abi];
      for (const nr of table.keys) expect(run(program, { arch: table.audit, nr, args: [] }), `${abi} ${nr}`).toBe(ENOSYS);
      for (const nr of ioUringCalls) expect(run(program, { arch: table.audit, nr, args: [] }), `${abi} ${nr}`).toBe(ENOSYS);
      // Their neighbours stay allowed (424 pidfd_send_signal, 428 open_tree).
      for (const nr of [424, 428]) expect(run(program, { arch: table.audit, nr, args: [] }), `${abi} ${nr}`).toBe(SECCOMP_RET_ALLOW);
    }
  });

  it('compares the low 32 bits of the request, as the kernel does', () => {
    expect(run(x64, { arch: X64, nr: IOCTL, args: [0n, (1n << 32n) | BigInt(TIOCSTI)] })).toBe(EPERM);
    expect(run(x64, { arch: X64, nr: IOCTL, args: [0n, 0xffffffff00000000n | BigInt(TIOCSTI)] })).toBe(EPERM);
  });

  it('covers the 32-bit table and refuses x32 and unknown architectures', () => {
    expect(run(x64, { arch: seccompArches.ia32.audit, nr: seccompArches.ia32.ioctl, args: [0n, BigInt(TIOCSTI)] })).toBe(EPERM);
    expect(run(x64, { arch: seccompArches.ia32.audit, nr: 3, args: [] })).toBe(SECCOMP_RET_ALLOW);
    expect(run(x64, { arch: X64, nr: 0x40000000 | 514, args: [0n, BigInt(TIOCSTI)] })).toBe(EPERM);
    expect(run(x64, { arch: 0x12345678, nr: 1 })).toBe(EPERM);
    const arm = sandboxProgram(abisOf('arm64'));
    expect(run(arm, { arch: seccompArches.arm64.audit, nr: seccompArches.arm64.ioctl, args: [0n, BigInt(TIOCSTI)] })).toBe(EPERM);
    expect(run(arm, { arch: seccompArches.arm64.audit, nr: 16, args: [0n, BigInt(TIOCSTI)] })).toBe(SECCOMP_RET_ALLOW);
  });

  it('encodes struct sock_filter little-endian, 8 bytes an instruction', () => {
    const bytes = encodeProgram(x64);
    expect(bytes.length).toBe(x64.length * 8);
    // ld [4]: code 0x20, jt 0, jf 0, k 4
    expect([...bytes.subarray(0, 8)]).toEqual([0x20, 0, 0, 0, 4, 0, 0, 0]);
    // jeq AUDIT_ARCH_X86_64
    expect(bytes.readUInt16LE(8)).toBe(0x15);
    expect(bytes.readUInt32LE(12)).toBe(0xc000003e);
    expect(bytes.readUInt32LE(bytes.length - 4)).toBe(ENOSYS);
    expect(sandboxFilter('x64').equals(bytes)).toBe(true);
    expect(() => sandboxFilter('riscv64')).toThrow(/no seccomp filter/);
  });
});
