#!/usr/bin/env bash
# `spamsort eval` at scale: the SpamAssassin corpus repeated into a 40,000-message corpus
# (each copy's Message-ID domain changed, so no two messages are the same: to spamsort a message
# is its tokens, and a Message-ID gives only its domain; the spam:ham ratio kept),
# then 5-fold cross-validation of all models (the four and fusion), as a user runs it. Prints
# the wall time and peak resident memory (GNU time), and the table (whose classified/s column
# times parse + tokenize + look-up + score per message on one thread).
#
# Usage: benches/eval_scale.sh [MESSAGES [FOLDS]]   (default 40000 5)
#        SPAMSORT=path/to/spamsort benches/eval_scale.sh   (default target/release/spamsort)
#        EVAL_CORPUS=DIR benches/eval_scale.sh   (builds the corpus in DIR and keeps it; reuses
#                                                 it if DIR/spam exists)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
n="${1:-40000}"
folds="${2:-5}"
bin="${SPAMSORT:-target/release/spamsort}"

corpus/fetch-spamassassin.sh >/dev/null
[ -n "${SPAMSORT:-}" ] || cargo build --release --quiet
if [ -n "${EVAL_CORPUS:-}" ]; then
  work="$EVAL_CORPUS"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

# Each class gets its share of n; copy c of a message has "cC." put before its Message-ID's
# domain (a message without one with a domain gets "Message-ID: <N@cC.eval-scale>" as its first
# line). Copy 0 is the corpus itself.
[ -d "$work/spam" ] || perl - "$work" "$n" <<'PL'
use strict; use warnings; use File::Find;
my ($work, $n) = @ARGV;
my %files;
for my $class ("spam", "ham") {
  my @f;
  find(sub { push @f, $File::Find::name if -f $_ && !/^\./ && $_ ne "cmds" }, "corpus/spamassassin/$class");
  $files{$class} = [sort @f];
}
my $total = @{$files{spam}} + @{$files{ham}};
for my $class ("spam", "ham") {
  my @f = @{$files{$class}};
  my $want = int($n * @f / $total + 0.5);
  mkdir "$work/$class" or die;
  for my $i (0 .. $want - 1) {
    my $copy = int($i / @f);
    open my $in, "<:raw", $f[$i % @f] or die; local $/; my $m = <$in>; close $in;
    if ($copy > 0 && $m !~ s/^(Message-ID:[ \t]*<?[^@\r\n]*\@)/$1c$copy./im) {
      $m = "Message-ID: <$i\@c$copy.eval-scale>\n" . $m;
    }
    open my $out, ">:raw", sprintf("%s/%s/%06d", $work, $class, $i) or die; print $out $m; close $out;
  }
}
PL
spam=$(ls "$work/spam" | wc -l)
ham=$(ls "$work/ham" | wc -l)
echo "eval on $spam spam + $ham ham ($(du -sh "$work" | cut -f1)), $folds folds, all models; load: $(uptime | sed 's/.*load average/load average/')"
/usr/bin/time -f "wall %e s, user %U s, system %S s, peak RSS %M KiB" \
  "$bin" eval --spam "$work/spam" --ham "$work/ham" --folds "$folds" --format table
