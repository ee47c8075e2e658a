#!/usr/bin/env bash
# The release rehearsed end to end, in a scratch clone of HEAD (nothing here changes this checkout
# or releases anything): `make test` after each step a release takes,
#   1. scripts/release.sh VERSION (--no-build: its two builds are make test's own steps), committed;
#   2. scripts/release.sh --bump NEXT, committed;
# so a release cannot turn make test red (issue 32: 0.4.0's would have). About two make test
# runs long; run it before a release (docs/development.md, "Releasing"), not inside make test,
# whose step "release script (scratch clone)" runs the quicker scripts/release-test.sh.
# Prints each step's make test summary; exits non-zero when either failed.
set -uo pipefail
. "$(dirname "$0")/env.sh"
cd "$REPO"
v=$(crate_version)
IFS=. read -r ma mi _ <<<"$v"
next=${1:-$ma.$((mi + 1)).0}
scratch=$(mktemp -d /tmp/hlrh.XXXXXX) # short: each server's socket path has 107 bytes at most
chmod 755 "$scratch" # the servers run as postgres
keep=${HLCULID_KEEP_SCRATCH:-0}
[ "$keep" = 1 ] || trap 'rm -rf "$scratch"' EXIT
git clone -q "$REPO" "$scratch/hlculid"
cd "$scratch/hlculid"
commit() { git add -A && git -c user.name=rehearsal -c user.email=rehearsal@localhost commit -qm "$1"; }
rc=0
step() { # step NAME: make test on the clone as it is now, its summary kept
  local log=$scratch/make-test-$1.log start=$SECONDS
  echo "== make test after $1 (log $log)"
  if HLCULID_SCRATCH=$scratch/run-$1 make test >"$log" 2>&1; then s=passed; else s=FAILED; rc=1; fi
  echo "   $s in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s: $(grep -E '^tests: ' "$log" | tail -1)"
  [ $s = passed ] || grep -E '^failed steps:' "$log"
}
echo "rehearsing the release of $v and the bump to $next in $scratch/hlculid"
scripts/release.sh --no-build "$v" || { echo "release.sh $v failed"; exit 1; }
commit "release $v (rehearsal)"
step "release-$v"
scripts/release.sh --bump "$next" || { echo "release.sh --bump $next failed"; exit 1; }
commit "begin $next (rehearsal)"
step "bump-$next"
exit $rc
