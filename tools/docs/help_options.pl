#!/usr/bin/perl
# The options a tool's --help lists, one a line: "OPTION" or "OPTION ARG"
# when the help shows it taking a value (ARG as the help writes it: FILE,
# DIR, N...). Read from the option column (an indented line that starts with
# '-': the option, its value and ", -other" up to a gap of two spaces, and
# every later column that starts with '-'), and from long options named in
# the prose ("... --warmup W ...") unless they belong to another asyncrt
# tool ("asyncrt-run --bundle") or to a command ("warm --arch").
#   help_options.pl TOOL [--commands] < HELP
# With --commands: the command names of a "commands:" list instead.
# The man pages, the completions and their test (tests/docs) all read the
# help through this one script, so that they agree on what it lists.
use strict;
use warnings;

my ($tool, $mode) = @ARGV;
die "usage: help_options.pl TOOL [--commands] < HELP\n" unless defined $tool;
my @lines = <STDIN>;
chomp @lines;

my (@commands, $in_commands, %not_prose);
for my $i (0 .. $#lines) {
    $_ = $lines[$i];
    # A command's usage names the global options too, in brackets: only its
    # own, unbracketed ones count ("prune --max-bytes N").
    $lines[$i] =~ s/\[[^\]]*\]//g if /^usage:/i;
    if (/^commands:\s*$/i) { $in_commands = 1; next; }
    if ($in_commands) {
        if (/^  ([a-z][a-z0-9-]*)\s{2,}\S/) { push @commands, $1; $not_prose{$i} = 1; next; }
        $in_commands = 0;
    }
}
if (defined $mode && $mode eq '--commands') {
    print "$_\n" for @commands;
    exit 0;
}
my %is_command = map { $_ => 1 } @commands;

my (%arg, @order);
sub add {
    my ($opt, $value) = @_;
    push @order, $opt unless exists $arg{$opt};
    $arg{$opt} = $value if defined $value && !defined $arg{$opt};
    $arg{$opt} //= undef;
}
my $opt_re = qr/-{1,2}[A-Za-z][A-Za-z0-9-]*/;
for my $i (0 .. $#lines) {
    my $line = $lines[$i];
    if ($line =~ /^ {1,6}-/) { # the option column, and later columns that start with '-'
        for my $column (split /\s{2,}/, $line) {
            $column =~ s/^\s+//;
            next unless $column =~ /^-/;
            while ($column =~ /(?:^|[ ,|])($opt_re)(?:[ =]([A-Za-z][A-Za-z0-9_.=:|\[\],+]*))?/g) {
                my ($opt, $value) = ($1, $2);
                $value =~ s/,$// if defined $value;
                add($opt, $value);
            }
        }
    }
    # Long options in the prose: a word of its own (not --use_fast_math).
    next if $not_prose{$i};
    while ($line =~ /(\S+)?\s*(?<![\w-])(--[a-z][a-z0-9-]*)(?![\w])(?: ([A-Z][A-Z0-9_]*)\b)?/g) {
        my ($before, $opt, $value) = ($1, $2, $3);
        my $head = substr($line, 0, $-[2]);
        next if $head =~ /\basyncrt-(?!\Q${\ ($tool =~ s|^asyncrt-||r)}\E\b)[a-z]+/; # another tool's
        next if defined $before && $is_command{$before};                      # a command's
        next if defined $before && $before =~ /^-X/;                          # passed through
        add($opt, $value);
    }
}
for my $opt (@order) {
    print defined $arg{$opt} ? "$opt $arg{$opt}\n" : "$opt\n";
}
