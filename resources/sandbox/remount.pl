# Puts back mounts a confined terminal lost (src/main/sandbox/mount-guard.ts). When a file or
# directory that bubblewrap mounted over is renamed over or removed on the host (git writes
# .git/config by renaming config.lock over it; a service re-creates its socket), the kernel
# detaches that mount in every other mount namespace, and the sandbox sees the new file as it
# is: writable, or no longer hidden.
#
# Usage: perl remount.pl ARCH PID NS
#   ARCH  the machine (Node's process.arch: x64, arm64, riscv64), for the system call numbers
#   PID   a process inside the sandbox (bubblewrap's init)
#   NS    the inode of the sandbox's mount namespace, as first seen: a pid reused by another
#         process is not entered (nor ever this process's own namespace)
# It enters once, says "ready", then serves requests on stdin until it closes: lines of
# "KIND HEX" (the path's bytes in hex, so any path is one line), then an empty line; it answers a
# line per path, in order, and then "done".
#   KIND  self: PATH bound read-only onto itself; null: /dev/null over it (a hidden file or
#         socket); tmpfs: an empty read-only directory over it (a hidden directory)
# Answers: "ok", "absent" (a hidden path that is gone: nothing to hide) or "fail why". When it cannot enter it says "enter: why" and exits 2.
#
# Kept running (one per confined terminal, mount-guard.ts) so that a mount comes back in a pipe
# round trip, not a perl start. It lives outside the sandbox's pid namespace, where nothing
# inside can see or signal it.
# It enters as enter-ns.pl says. perl: present where Tandem already uses it (pty/termios.ts).
use strict;
use warnings;
use Cwd ();
# Beside this file; a relative path is made explicit (perl searches @INC for one that is not).
my ($here) = __FILE__ =~ m{^(.*)/[^/]*$};
$here = './' . ($here // '.') unless defined $here && $here =~ m{^/};
require("$here/enter-ns.pl");

$| = 1;
my ($arch, $pid, $ns) = @ARGV;
die "usage: remount.pl ARCH PID NS\n" unless @ARGV == 3 && defined $ns && $pid =~ /^\d+$/ && $ns =~ /^\d+$/;
# setns and mount: the generic numbers (arm64, riscv64) and x86_64's own.
my %numbers = (x64 => [308, 165], arm64 => [268, 40], riscv64 => [268, 40]);
my $nr = $numbers{$arch};
unless ($nr) { print "enter: no system call numbers for $arch\n"; exit 2; }
my ($SETNS, $MOUNT) = @$nr;
my $NEWNS = 0x00020000;
my ($MS_RDONLY, $MS_NOSUID, $MS_NODEV, $MS_NOEXEC, $MS_REMOUNT, $MS_BIND) = (1, 2, 4, 8, 32, 4096);
my %kept = (nosuid => $MS_NOSUID, nodev => $MS_NODEV, noexec => $MS_NOEXEC, noatime => 1024, nodiratime => 2048, relatime => 1 << 21);

sub unescape { my $s = shift; $s =~ s/\\([0-7]{3})/chr(oct($1))/ge; return $s; }

# The sandbox's mounts as its processes see them, read before entering: inside, /proc is the
# sandbox's own, where this process has no entry.
my @mounts;
if (open(my $info, '<', "/proc/$pid/mountinfo")) {
  while (my $line = <$info>) {
    my @f = split / /, $line;
    push @mounts, [unescape($f[4]), $f[5]] if @f > 5;
  }
  close $info;
}
unless (@mounts) { print "enter: cannot read the sandbox's mounts: $!\n"; exit 2; }

my $why = enter_namespace($SETNS, $pid, $ns, 'mnt', $NEWNS);
if ($why ne '') { print "enter: $why\n"; exit 2; }
chdir '/';

# Per-mount flags a remount in a user namespace must keep (the kernel refuses to drop them):
# those of the mount the path lies on, which a bind of it copies.
sub flags_at {
  my $path = shift;
  my ($best, $opts) = ('', '');
  for my $m (@mounts) {
    my ($point, $o) = @$m;
    my $prefix = $point eq '/' ? '/' : "$point/";
    if (($path eq $point || index($path, $prefix) == 0) && length($point) >= length($best)) { ($best, $opts) = ($point, $o); }
  }
  my $flags = 0;
  for (split /,/, $opts) { $flags |= $kept{$_} if $kept{$_}; }
  return $flags;
}

sub restore {
  my ($kind, $path) = @_;
  # A link cannot be pinned: a mount lands on its target (git-protect.ts refuses links too).
  return "fail it is a symbolic link now" if -l $path;
  # Nor a link on the way: the mount would land where it leads.
  my $real = -e $path ? Cwd::realpath($path) : undef;
  return "fail it leads elsewhere now (a link on the way)" if defined $real && $real ne $path;
  my $flags = flags_at($path);
  # syscall() passes strings as pointers and wants them writable: every one is a variable here.
  my $r;
  if ($kind eq 'self') {
    return "fail it is gone" unless -e $path;
    $r = syscall($MOUNT, $path, $path, 0, $MS_BIND, 0);
  } elsif ($kind eq 'null') {
    return "absent" unless -e $path;
    return "fail it is a directory now" if -d $path;
    my $null = '/dev/null';
    $r = syscall($MOUNT, $null, $path, 0, $MS_BIND, 0);
  } elsif ($kind eq 'tmpfs') {
    return "absent" unless -e $path;
    return "fail it is not a directory now" unless -d $path;
    my ($source, $type, $data) = ('tmpfs', 'tmpfs', 'mode=0755');
    $r = syscall($MOUNT, $source, $path, $type, $MS_NOSUID | $MS_NODEV, $data);
    $flags |= $MS_NOSUID | $MS_NODEV;
  } else {
    return "fail unknown kind $kind";
  }
  return "fail mount: $!" if $r != 0;
  $r = syscall($MOUNT, 0, $path, 0, $MS_REMOUNT | $MS_BIND | $MS_RDONLY | $flags, 0);
  return $r == 0 ? "ok" : "fail read-only: $!";
}

print "ready\n";
while (my $line = <STDIN>) {
  chomp $line;
  if ($line eq '') { print "done\n"; next; }
  my ($kind, $hex) = split / /, $line, 2;
  print defined $hex && $hex =~ /^(?:[0-9a-f]{2})+$/ ? restore($kind, pack('H*', $hex)) : 'fail malformed request', "\n";
}
