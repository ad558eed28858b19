# Entering one of a confined terminal's namespaces from outside (remount.pl: its mounts;
# forward.pl: its network). The namespace belongs to the user namespace bubblewrap made first;
# the sandbox's processes live in a second one nested inside (--disable-userns), which holds no
# rights over it. So this enters the owner (NS_GET_USERNS on the namespace), where the person's
# own user has them, and then the namespace. perl is single-threaded, which setns into a user
# namespace needs.
#
# enter_namespace(SETNS, PID, NS, KIND, FLAG): KIND is the /proc/PID/ns entry (mnt, net), NS the
# inode first seen there (a pid reused by another process is not entered, nor ever this
# process's own namespace), FLAG its CLONE_NEW* value. Returns "" once inside, or why not.
use strict;
use warnings;

sub enter_namespace {
  my ($setns, $pid, $ns, $kind, $flag) = @_;
  my ($NEWUSER, $NS_GET_USERNS) = (0x10000000, 0xb701);
  open(my $fh, '<', "/proc/$pid/ns/$kind") or return "$!";
  my $entering = (stat($fh))[1];
  my $own = (stat("/proc/self/ns/$kind"))[1];
  return "process $pid is no longer in the sandbox" if $entering != $ns || $entering == $own;
  my $owner = ioctl($fh, $NS_GET_USERNS, 0);
  return "the namespace's owner: $!" unless defined $owner;
  $owner = 0 + $owner;
  return "user namespace: $!" unless syscall($setns, $owner, $NEWUSER) == 0;
  my $entered = syscall($setns, fileno($fh), $flag) == 0;
  my $why = "$kind namespace: $!";
  close $fh;
  return $entered ? '' : $why;
}

1;
