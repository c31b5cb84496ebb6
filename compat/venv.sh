#!/usr/bin/env bash
# compat/venv.sh VERSION PYTHON: a venv at .venv-compat/VERSION with jaxgrade (editable, this
# checkout) and jax==jaxlib==VERSION; everything else at constraints.txt's versions, so that JAX
# is the one thing that differs from `make install`'s venv. Kept while it is complete (a stamp).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$1 python=$2
venv=.venv-compat/$version
if [ -f "$venv/.installed" ] && [ "$venv/.installed" -nt pyproject.toml ] && [ "$venv/.installed" -nt constraints.txt ]; then
  exit 0
fi
python=$(compat/python.sh "$python") || { echo "compat: JAX $version needs it" >&2; exit 1; }
rm -rf "$venv"
"$python" -m venv "$venv"
# constraints.txt less JAX's own two lines: JAX is the variable.
grep -v -E '^(jax|jaxlib)==' constraints.txt > "$venv/constraints.txt"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet -c "$venv/constraints.txt" -e . "jax==$version" "jaxlib==$version"
touch "$venv/.installed"
