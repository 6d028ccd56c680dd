#!/usr/bin/env bash
# The README and docs/ keep their rules in this tree (check_docs.py), and the
# checker sees a break of each: a link to a missing file, an anchor with no
# heading, an issue number, a README of 260 lines, a changed quick-start
# command, a docs/ page the README does not link, and a key recipe that
# leaves the key readable until its chmod. The key recipe is also run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
check="$repo/tests/docs/check_docs.py"
python3 "$check" "$repo"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fresh() { # a tree of symlinks to the repo's files, with README.md and docs/ copied, writable
  rm -rf "$work/t" && mkdir "$work/t"
  for f in "$repo"/* "$repo"/.[!.]*; do
    case "$(basename "$f")" in README.md|docs|build*|.git) ;; *) ln -s "$f" "$work/t/" ;; esac
  done
  cp "$repo/README.md" "$work/t/" && cp -r "$repo/docs" "$work/t/"
  python3 "$check" "$work/t" >/dev/null || { echo "FAIL: the unchanged copy was refused"; exit 1; }
}
refused() { # $1: what was broken; $2: the fault line the checker must print (a grep -E pattern)
  local out
  if out=$(python3 "$check" "$work/t"); then echo "FAIL: $1 passed"; exit 1; fi
  grep -qE "$2" <<<"$out" || { echo "FAIL: $1: the checker said: $out"; exit 1; }
}

fresh; sed -i 's|(../tools/cache/README.md)|(../tools/cache/README-gone.md)|' "$work/t/docs/cache.md"
refused "a link to a missing file" '^docs/cache\.md:[0-9]+: link to \.\./tools/cache/README-gone\.md: no such file'
fresh; sed -i 's|docs/platform.md#nvrtc-from-pip|docs/platform.md#nvrtc-from-pypi|' "$work/t/README.md"
refused "an anchor with no heading" '^README\.md:[0-9]+: link to docs/platform\.md#nvrtc-from-pypi: docs/platform\.md has no heading'
fresh; echo 'The cap came with issue 12.' >>"$work/t/docs/tools.md"
refused "an issue number" '^docs/tools\.md:[0-9]+: an issue number'
fresh; while [ "$(wc -l <"$work/t/README.md")" -lt 259 ]; do echo >>"$work/t/README.md"; done
python3 "$check" "$work/t" >/dev/null || { echo "FAIL: a README of 259 lines was refused"; exit 1; }
echo >>"$work/t/README.md"
refused "a README of 260 lines" '^README\.md: 260 lines'
fresh; sed -i 's|^bash tools/test.sh    #|bash tools/test.sh   #|' "$work/t/README.md"
refused "a changed quick-start command" 'quick start command is missing or changed: bash tools/test\.sh'
fresh; echo '# New' >"$work/t/docs/new.md"
refused "a page the README does not link" '^README\.md: docs/new\.md is not linked'
fresh; sed -i 's|^(umask 077 \&\& mkdir -p ~/.config \&\& head -c 32 /dev/urandom > ~/.config/asyncrt.key)|head -c 32 /dev/urandom > ~/.config/asyncrt.key \&\& chmod 600 ~/.config/asyncrt.key|' "$work/t/docs/cache.md"
refused "a key written before its chmod" '^docs/cache\.md:[0-9]+: a key file written without umask 077'

# docs/cache.md's key recipe, run as written (HOME elsewhere) under a umask
# of 022 and with chmod a no-op: the key must be 0600 from its creation on.
recipe=$(grep -E '^\(?(umask [0-9]+ && )?.*/dev/urandom > ~/\.config/asyncrt\.key' "$repo/docs/cache.md")
mkdir -p "$work/home/.config" # as most homes have it
(cd "$work" && umask 022 && HOME="$work/home" bash -c "chmod() { :; }; $recipe")
mode=$(stat -c %a "$work/home/.config/asyncrt.key") size=$(stat -c %s "$work/home/.config/asyncrt.key")
[ "$mode" = 600 ] && [ "$size" = 32 ] || { echo "FAIL: the key recipe made a key of mode $mode, $size bytes: $recipe"; exit 1; }
echo "ok: README.md and docs/ keep their rules; the checker refuses a broken link, a missing anchor, an issue number, a 260-line README, a changed quick-start command, an unlinked page and a key left readable; the key recipe makes a 0600 key"
