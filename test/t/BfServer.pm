# Helpers shared by the TAP tests of test/t (PostgreSQL::Test::Cluster):
# the processes of a running server, for tests that crash it.
package BfServer;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Utils;

our @EXPORT = qw(server_children);

# The processes whose parent is the postmaster of $node, from /proc (after
# the "(comm)" of stat: the state, then the parent's pid).  A process that
# ends while they are listed is left out.
sub server_children
{
	my ($node) = @_;
	my ($pmpid) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	my @children;

	opendir(my $proc, '/proc') or die "cannot read /proc: $!";
	for my $pid (grep { /^\d+$/ } readdir $proc)
	{
		open(my $fh, '<', "/proc/$pid/stat") or next;
		my $stat = <$fh>;
		close $fh;
		push @children, $pid
		  if defined $stat && $stat =~ /.*\)\s+\S+\s+(\d+)/s && $1 == $pmpid;
	}
	closedir $proc;
	return @children;
}

1;
