"""What the children's XLA options (grader.xla_options.XLA_FLAGS) buy: the compilation time
of the small eager operations a wrong submission runs at each input shape, with XLA's
defaults and with the grader's options, in fresh processes, interleaved (medians of 5 each).

A mistake compiles its own operations once per input shape, so this is most of what a value
or structure mistake costs beyond a passing submission (docs/performance.md).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
ROUNDS = int(os.environ.get("BENCH_RUNS", "5"))

# Four operations students put around or instead of the sum, at the five lengths of the seed
# exercise's value check past the empty one, on an array placed as the reference places it.
PROGRAM = """
import json, time
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from jax._src import compiler
mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
xs = [jax.device_put(np.ones(n, np.float32), NamedSharding(mesh, PartitionSpec())) for n in (1, 2, 3, 7, 64)]
jnp.negative(xs[0]).block_until_ready()  # the backend's start-up is not a compilation
spent = []
real = compiler.backend_compile_and_load
def timed(*args, **kwargs):
    started = time.perf_counter()
    try:
        return real(*args, **kwargs)
    finally:
        spent.append(time.perf_counter() - started)
compiler.backend_compile_and_load = timed
started = time.perf_counter()
for operation in (jnp.abs, jnp.cumsum, lambda v: v * 2.0, jnp.sort):
    for x in xs:
        operation(x).block_until_ready()
print(json.dumps({"compiles": len(spent), "compile_s": sum(spent), "total_s": time.perf_counter() - started}))
"""


def measure(flags: str) -> dict[str, float]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "8", "XLA_FLAGS": flags}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, check=True,
                          timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from grader.xla_options import XLA_FLAGS
    runs: dict[str, list[dict[str, float]]] = {"XLA's defaults": [], f"grader ({XLA_FLAGS})": []}
    for _ in range(ROUNDS):
        for label, flags in zip(runs, ("", XLA_FLAGS)):
            runs[label].append(measure(flags))
    medians = {}
    for label, measured in runs.items():
        compile_s = statistics.median(r["compile_s"] for r in measured)
        total_s = statistics.median(r["total_s"] for r in measured)
        medians[label] = compile_s
        print(f"{label}: {measured[0]['compiles']:.0f} compilations, {compile_s * 1000:.0f} ms compiling "
              f"({total_s * 1000:.0f} ms with dispatch and lowering), median of {ROUNDS}")
    default, grader = medians.values()
    print(f"compilation time, grader/defaults: {grader / default:.2f}")


if __name__ == "__main__":
    main()
