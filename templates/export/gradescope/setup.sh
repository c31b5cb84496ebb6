#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu). It installs
# Python 3.11 or newer and the jaxgrade source bundled next to it, with pip, into a virtualenv.
set -euo pipefail
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${JAXGRADE_AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/jaxgrade-venv"
# The compilation cache, where the submission's uid can read it (root's home is closed to it).
export JAXGRADE_CACHE="${JAXGRADE_CACHE:-$ROOT/jaxgrade-cache}"
# The graded exercise, its key included: beside the jaxgrade source, never inside what pip installs.
export JAXGRADE_EXERCISES="$SOURCE/exercises"
export DEBIAN_FRONTEND=noninteractive

pick_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

PYTHON="$(pick_python || true)"
if [ -z "$PYTHON" ]; then  # Ubuntu 22.04 ships 3.10: take 3.11 from the deadsnakes archive
  apt-get update
  apt-get install -y --no-install-recommends software-properties-common
  add-apt-repository -y ppa:deadsnakes/ppa
  apt-get update
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  PYTHON=python3.11
fi
if ! "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null; then
  apt-get update
  apt-get install -y --no-install-recommends "$(basename "$PYTHON")-venv" || apt-get install -y python3-venv
fi

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --upgrade pip
# constraints.txt: the versions the autograder was exported (and validated) with, JAX among them.
"$VENV/bin/python" -m pip install -c "$SOURCE/jaxgrade/constraints.txt" "$SOURCE/jaxgrade"
# Grade the reference once now: it fills the compilation cache, so students' grading is faster.
# The cache is root's, readable and not writable by every other user (the submission's uid).
PYTHONPATH="$SOURCE/jaxgrade" "$VENV/bin/python" -P -s -m grader.authoring.export warm-cache -e @SLUG@ || true
# Gradescope's advice for student code: another user, and `chmod o=` on what it must not read.
# The sandbox gives each submission's process a uid of its own (61000-61999, deliberately no
# account: it never reuses a named uid). Here every copy of the reference and the checks under
# the autograder tree and the virtualenv (found by content) is closed to other users, and a probe
# running as an unprivileged uid must fail to read them, or the image build fails now. No other
# exercise is in the image: the bundled source and what pip installs from it hold none.
# run_autograder does the same before every submission.
PYTHONPATH="$SOURCE/jaxgrade" "$VENV/bin/python" -P -s -m grader.authoring.export lock --root "$ROOT" -e @SLUG@
