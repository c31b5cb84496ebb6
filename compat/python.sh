#!/usr/bin/env bash
# compat/python.sh PYTHON: prints the path of the interpreter PYTHON names (python3.12, or a
# path): PYTHON itself where it runs, else pyenv's newest matching version (pyenv's shim on PATH
# answers only for its global version). Fails, saying so on stderr, where there is none.
set -uo pipefail
python=$1
if "$python" -c '' 2>/dev/null; then
  command -v "$python"
  exit 0
fi
if command -v pyenv >/dev/null 2>&1; then
  for v in $(pyenv versions --bare 2>/dev/null | grep -E "^${python#python}(\.|$)" | sort -V -r); do
    found="$(pyenv root)/versions/$v/bin/$python"
    [ -x "$found" ] && { echo "$found"; exit 0; }
  done
fi
echo "compat: $python not found (on PATH or with pyenv)" >&2
exit 1
