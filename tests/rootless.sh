#!/usr/bin/env bash
# make test-rootless (as root): the grading sandbox as an instructor who is not root would have it.
# A copy of this checkout (its tracked and new files, as they are now) goes to a folder a plain user owns; that
# user builds its own .venv (from the registry: install time) and runs, with CI's strictness, the sandbox tests
# and the hostile batch at the rootless level, then `make demo`, whose class must be graded at that level.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "make test-rootless: run it as root (it switches to an unprivileged user itself)"; exit 2; }
user=${ROOTLESS_USER:-nobody}
for candidate in ${ROOTLESS_PYTHON:-python3.11 /usr/bin/python3.11 /usr/local/bin/python3.11 /usr/bin/python3}; do
    path=$(command -v "$candidate" || true)
    if [ -n "$path" ] && runuser -u "$user" -- "$path" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        python=$path; break
    fi
done
[ -n "${python:-}" ] || { echo "make test-rootless: no Python >= 3.11 that $user can run"; exit 2; }
work=$(mktemp -d /tmp/rootless-XXXXXX)
trap 'status=$?; [ $status = 0 ] && rm -rf "$work" || echo ">> rootless: kept $work for a look"' EXIT
chmod 755 "$work"
mkdir -p "$work/repo" "$work/home"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [ -e "$f" ] && printf '%s\0' "$f"; done | tar --null -T - -cf - | tar -xf - -C "$work/repo"
chown -R "$user" "$work"
echo ">> rootless: as $user (uid $(id -u "$user")) in $work/repo, with $python ($("$python" --version 2>&1))"
as_user() { runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work/home" LANG=C.UTF-8 CI="${CI:-true}" "$@"; }
as_user make -C "$work/repo" --no-print-directory venv PYTHON="$python"
as_user make -C "$work/repo" --no-print-directory sandbox-deps
as_user bash -c "cd '$work/repo' && .venv/bin/python -m pytest -q -p no:cacheprovider tests/grader/runner/test_levels.py \
    tests/grader/runner/test_sandbox.py tests/grader/runner/test_zygote.py tests/grader/runner/test_seccomp.py"
as_user bash -c "cd '$work/repo' && MPLBACKEND=Agg .venv/bin/python -m grader.demo" | tee "$work/demo.log"
grep -q "sandbox: userns" "$work/demo.log" || { echo "make test-rootless: the demo class was not graded at the rootless level"; exit 1; }
echo ">> rootless: the demo class was graded at level userns as $user"
