#!/usr/bin/env bash
# compat/validate.sh VERSION [SEEDS]: the catalogue validated (`jaxgrade validate --fresh`) in
# .venv-compat/VERSION (compat/venv.sh makes it), with a compilation cache of its own; prints
# the table; then forgery graded there (compat/tamper.py); then one line: the JAX version,
# whether every exercise held and every forgery was caught, the time.
# The output is kept in .venv-compat/VERSION/validate.log.
set -uo pipefail
cd "$(dirname "$0")/.."
version=$1 seeds=${2:-1}
venv=.venv-compat/$version
start=$(date +%s)
JAXGRADE_CACHE="$PWD/$venv/cache" "$venv/bin/jaxgrade" validate --fresh --seeds "$seeds" 2>&1 | tee "$venv/validate.log"
status=${PIPESTATUS[0]}
# The catalogue holds no submission that forges its record: forgery is graded apart.
JAXGRADE_CACHE="$PWD/$venv/cache" "$venv/bin/python" compat/tamper.py 2>&1 | tee -a "$venv/validate.log"
tamper=${PIPESTATUS[0]}
echo "compat: JAX $version ($("$venv/bin/python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])')):" \
     "$([ "$status" -eq 0 ] && echo "catalogue valid" || echo "INVALID (exit $status)")," \
     "$([ "$tamper" -eq 0 ] && echo "forgery caught" || echo "FORGERY MISSED (exit $tamper)"), $(( $(date +%s) - start )) s, $seeds seed(s)" \
  | tee -a "$venv/validate.log"
[ "$status" -eq 0 ] && [ "$tamper" -eq 0 ]
