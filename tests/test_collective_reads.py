"""``AvoidsPrimitives(reads=...)``: "no collective of kind K reads a value computed from
operand X", judged on real submissions of a sequence-parallel attention in a real child (8
simulated devices). The dataflow follows each operand of a tuple ``device_put`` apart, so
gathering K and V after placing (q, k, v) together does not read q."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from conftest import checks_judged

from grader.arguments import Array, Signature
from grader.checks import AvoidsPrimitives

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

MESH = Mesh(np.array(jax.devices()), ("data",))
ROWS = NamedSharding(MESH, P("data"))


def attend(q, k, v):
    weights = jax.nn.softmax(q @ k.T, axis=-1)
    return weights @ v


def spmd(body, *args):
    return jax.shard_map(body, mesh=MESH, in_specs=(P("data"),) * len(args), out_specs=P("data"))(*args)
"""
SIGNATURE = Signature({name: Array("float32", (16, 4)) for name in ("q", "k", "v")})
PROBE = {name: np.random.default_rng(i).standard_normal((16, 4)).astype(np.float32)
         for i, name in enumerate(("q", "k", "v"))}
NO_GATHERED_Q = AvoidsPrimitives(id="structure.q_stays", title="q is never gathered", operations=("all_gather",),
                                 reads="q", why="Each device keeps its own rows of Q; only K and V travel.")

# Gathers K and V only: the right way to shard attention by sequence.
GATHERS_KV = {
    "tuple_device_put": """
        def f(q, k, v):
            q, k, v = jax.device_put((q, k, v), ROWS)
            return spmd(lambda q, k, v: attend(q, jax.lax.all_gather(k, "data", tiled=True),
                                               jax.lax.all_gather(v, "data", tiled=True)), q, k, v)
    """,
    "gathered_as_a_tuple_in_jit": """
        @jax.jit
        def f(q, k, v):
            def body(q, k, v):
                k, v = jax.lax.all_gather((k, v), "data", tiled=True)
                return attend(q, k, v)
            return spmd(body, *jax.device_put((q, k, v), ROWS))
    """,
}
# Gathers Q, or a value computed from it.
GATHERS_Q = {
    "gathers_q": """
        def f(q, k, v):
            q, k, v = jax.device_put((q, k, v), ROWS)
            def body(q, k, v):
                full = jax.lax.all_gather(q, "data", tiled=True)
                rows = jax.lax.axis_index("data") * q.shape[0] + jnp.arange(q.shape[0])
                return attend(full[rows], jax.lax.all_gather(k, "data", tiled=True),
                              jax.lax.all_gather(v, "data", tiled=True))
            return spmd(body, q, k, v)
    """,
    "gathers_a_value_computed_from_q_in_a_tuple": """
        @jax.jit
        def f(q, k, v):
            def body(q, k, v):
                scaled, k, v = jax.lax.all_gather((q * 1.0, k, v), "data", tiled=True)
                rows = jax.lax.axis_index("data") * q.shape[0] + jnp.arange(q.shape[0])
                return attend(scaled[rows], k, v)
            return spmd(body, *jax.device_put((q, k, v), ROWS))
    """,
}


@pytest.fixture
def judge(tmp_path: Path) -> Iterator:
    with checks_judged(tmp_path, HEADER, SIGNATURE, PROBE) as run:
        yield run


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(GATHERS_KV))
def test_gathering_only_k_and_v_passes_and_the_same_program_fails_for_k(judge, variant: str) -> None:
    outcome = judge(NO_GATHERED_Q, GATHERS_KV[variant])
    assert outcome.status == "passed", outcome.message
    outcome = judge(AvoidsPrimitives(id="structure.k_stays", title="k stays", operations=("all_gather",),
                                     reads="k"), GATHERS_KV[variant])
    assert outcome.status == "failed" and "all_gather on a value computed from k" in outcome.message


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(GATHERS_Q))
def test_gathering_q_or_a_value_computed_from_it_fails_saying_so(judge, variant: str) -> None:
    outcome = judge(NO_GATHERED_Q, GATHERS_Q[variant])
    assert outcome.status == "failed", outcome.message
    assert "jax.lax.all_gather on a value computed from q. Each device keeps" in outcome.message
    assert outcome.expected == "no jax.lax.all_gather reading a value computed from q"
    assert outcome.observed.startswith("1 jax.lax.all_gather on a value computed from q among"), outcome.observed


def test_reads_must_name_a_parameter_or_a_leaf_of_one() -> None:
    assert NO_GATHERED_Q.problems(SIGNATURE, PROBE) == []
    wrong = AvoidsPrimitives(id="structure.x", title="x", operations=("all_gather",), reads="tokens")
    assert wrong.problems(SIGNATURE, PROBE) == ["structure.x: reads='tokens' names no parameter or leaf of one"]
