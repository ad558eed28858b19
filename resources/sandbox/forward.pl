# The way out of a confined terminal with the network on (Linux; src/main/sandbox/launch.ts).
# The sandbox has its own network namespace; HTTP_PROXY and ALL_PROXY inside name
# 127.0.0.1:PORT of its loopback (most tools take only a TCP host:port). This listens there
# from outside: it enters the sandbox's network namespace (enter-ns.pl, as remount.pl enters the
# mount namespace), binds the port, and relays each connection to the terminal's proxy in
# Tandem, a Unix socket on the host, which checks every target (proxy.ts). Nothing of it is
# inside the sandbox: no process there can see, signal or replace it, and it starts in a perl
# start, not a runtime's.
#
# Usage: perl forward.pl ARCH PID NS PORT SOCKET
#   ARCH    the machine (Node's process.arch: x64, arm64, riscv64), for the system call number
#   PID     a process inside the sandbox (bubblewrap's init)
#   NS      the inode of the sandbox's network namespace, as first seen: a pid reused by
#           another process is not entered (nor ever this process's own namespace)
#   PORT    the loopback port inside
#   SOCKET  the proxy's Unix socket (a host path: the mount namespace stays the host's)
# Says "ready" once it listens, or "enter: why" / "listen: why" and exits 2. Ends when its
# stdin closes (the terminal closed). Bounded: at most MAX_PAIRS connections at once (more are
# closed as they come; the proxy bounds what it accepts per agent anyway) and BUF bytes
# waiting per direction (a side that does not read stops the other from being read).
use strict;
use warnings;
use Socket qw(AF_INET AF_UNIX SOCK_STREAM SOL_SOCKET SO_REUSEADDR SHUT_WR inet_aton pack_sockaddr_in pack_sockaddr_un);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use Errno qw(EAGAIN EWOULDBLOCK EINTR);
# Beside this file; a relative path is made explicit (perl searches @INC for one that is not).
my ($here) = __FILE__ =~ m{^(.*)/[^/]*$};
$here = './' . ($here // '.') unless defined $here && $here =~ m{^/};
require("$here/enter-ns.pl");

$| = 1;
# A peer that closed: the write fails (EPIPE) and that connection ends, not this process.
$SIG{PIPE} = 'IGNORE';
my ($arch, $pid, $ns, $port, $path) = @ARGV;
unless (@ARGV == 5 && $pid =~ /^\d+$/ && $ns =~ /^\d+$/ && $port =~ /^\d+$/ && $port > 0 && $port < 65536) {
  print "enter: usage: forward.pl ARCH PID NS PORT SOCKET\n";
  exit 2;
}
# setns: the generic number (arm64, riscv64) and x86_64's own.
my %numbers = (x64 => 308, arm64 => 268, riscv64 => 268);
my $SETNS = $numbers{$arch};
unless ($SETNS) { print "enter: no system call number for $arch\n"; exit 2; }
my $NEWNET = 0x40000000;
my $BUF = 65536;
my $MAX_PAIRS = 256;

my $why = enter_namespace($SETNS, $pid, $ns, 'net', $NEWNET);
if ($why ne '') { print "enter: $why\n"; exit 2; }

socket(my $listen, AF_INET, SOCK_STREAM, 0) or do { print "listen: $!\n"; exit 2; };
setsockopt($listen, SOL_SOCKET, SO_REUSEADDR, 1);
bind($listen, pack_sockaddr_in($port, inet_aton('127.0.0.1'))) or do { print "listen: $!\n"; exit 2; };
listen($listen, 128) or do { print "listen: $!\n"; exit 2; };
nonblocking($listen);
print "ready\n";

sub nonblocking {
  my $fh = shift;
  my $flags = fcntl($fh, F_GETFL, 0);
  fcntl($fh, F_SETFL, $flags | O_NONBLOCK);
}

# One relayed connection: two ends, and per direction the bytes read but not yet written, and
# whether its reader saw the end (then, once written, the writer's side is shut for writing).
my @pairs;

sub open_pair {
  my $client = shift;
  nonblocking($client);
  if (@pairs >= $MAX_PAIRS) { close $client; return; }
  my $proxy;
  unless (socket($proxy, AF_UNIX, SOCK_STREAM, 0) && connect($proxy, pack_sockaddr_un($path))) {
    close $client;
    close $proxy if $proxy;
    return;
  }
  nonblocking($proxy);
  push @pairs, { ends => [$client, $proxy], buf => ['', ''], eof => [0, 0], shut => [0, 0] };
}

sub close_pair {
  my $pair = shift;
  close $_ for @{ $pair->{ends} };
  @pairs = grep { $_ != $pair } @pairs;
}

# Direction d reads end d and writes end 1-d.
sub pump {
  my ($pair, $d, $readable, $writable) = @_;
  my ($from, $to) = ($pair->{ends}[$d], $pair->{ends}[1 - $d]);
  if ($readable && !$pair->{eof}[$d] && length($pair->{buf}[$d]) < $BUF) {
    my $n = sysread($from, my $chunk, $BUF);
    if (!defined $n) {
      return 0 unless $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
    } elsif ($n == 0) {
      $pair->{eof}[$d] = 1;
    } else {
      $pair->{buf}[$d] .= $chunk;
      $writable = 1;
    }
  }
  if ($writable && length($pair->{buf}[$d]) > 0) {
    my $n = syswrite($to, $pair->{buf}[$d]);
    if (!defined $n) {
      return 0 unless $! == EAGAIN || $! == EWOULDBLOCK || $! == EINTR;
    } else {
      substr($pair->{buf}[$d], 0, $n, '');
    }
  }
  if ($pair->{eof}[$d] && length($pair->{buf}[$d]) == 0 && !$pair->{shut}[$d]) {
    shutdown($to, SHUT_WR);
    $pair->{shut}[$d] = 1;
  }
  return 1;
}

my $stdin_fd = fileno(STDIN);
while (1) {
  my ($rin, $win) = ('', '');
  vec($rin, $stdin_fd, 1) = 1;
  vec($rin, fileno($listen), 1) = 1;
  for my $pair (@pairs) {
    for my $d (0, 1) {
      my ($from, $to) = ($pair->{ends}[$d], $pair->{ends}[1 - $d]);
      vec($rin, fileno($from), 1) = 1 if !$pair->{eof}[$d] && length($pair->{buf}[$d]) < $BUF;
      vec($win, fileno($to), 1) = 1 if length($pair->{buf}[$d]) > 0;
    }
  }
  my $found = select(my $rout = $rin, my $wout = $win, undef, undef);
  if ($found < 0) {
    next if $! == EINTR;
    exit 1;
  }
  # The terminal closed (the host ended this process's stdin): nothing more to relay.
  if (vec($rout, $stdin_fd, 1)) {
    my $n = sysread(STDIN, my $ignored, 4096);
    exit 0 if !defined $n || $n == 0;
  }
  # Pairs are relayed as they were when select looked; those accepted now wait for the next look.
  my @done;
  for my $pair (@pairs) {
    my $ok = 1;
    for my $d (0, 1) {
      my ($from, $to) = ($pair->{ends}[$d], $pair->{ends}[1 - $d]);
      $ok &&= pump($pair, $d, vec($rout, fileno($from), 1), vec($wout, fileno($to), 1));
    }
    push @done, $pair if !$ok || ($pair->{shut}[0] && $pair->{shut}[1]);
  }
  close_pair($_) for @done;
  if (vec($rout, fileno($listen), 1)) {
    while (1) {
      my $client;
      last unless accept($client, $listen);
      open_pair($client);
    }
  }
}
