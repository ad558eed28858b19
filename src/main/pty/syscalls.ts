/** Syscall numbers as reported by /proc/<pid>/syscall; they differ per architecture. */
export type SyscallClass = 'read' | 'poll' | 'select' | 'epoll' | 'other';

type SyscallName = 'read' | 'readv' | 'pread64' | 'poll' | 'ppoll' | 'select' | 'pselect6' | 'epoll_wait' | 'epoll_pwait' | 'epoll_pwait2';

// arm64 uses the asm-generic table, which has no poll, select or epoll_wait (libc maps them
// onto ppoll, pselect6 and epoll_pwait).
export const SYSCALLS: Record<string, Partial<Record<SyscallName, number>>> = {
  x64: {
    read: 0,
    readv: 19,
    pread64: 17,
    poll: 7,
    ppoll: 271,
    select: 23,
    pselect6: 270,
    epoll_wait: 232,
    epoll_pwait: 281,
    epoll_pwait2: 441,
  },
  arm64: {
    read: 63,
    readv: 65,
    pread64: 67,
    ppoll: 73,
    pselect6: 72,
    epoll_pwait: 22,
    epoll_pwait2: 441,
  },
};

const CLASS_OF: Record<SyscallName, SyscallClass> = {
  read: 'read',
  readv: 'read',
  pread64: 'read',
  poll: 'poll',
  ppoll: 'poll',
  select: 'select',
  pselect6: 'select',
  epoll_wait: 'epoll',
  epoll_pwait: 'epoll',
  epoll_pwait2: 'epoll',
};

const byArch = new Map<string, Map<number, SyscallClass>>(
  Object.entries(SYSCALLS).map(([arch, table]) => [arch, new Map(Object.entries(table).map(([name, nr]) => [nr, CLASS_OF[name as SyscallName]]))]),
);

export function classifySyscall(nr: number, arch: string = process.arch): SyscallClass {
  return byArch.get(arch)?.get(nr) ?? 'other';
}
