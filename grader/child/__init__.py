"""Everything that runs inside the sandboxed child: the entry point (``entry``), the request
server (``server``), the pins that keep the grader's references from a submission that patches
JAX (``pins``), what the child changes in JAX at startup (``jax_patches``), the recorder of what
a call did (``recorder``, ``jaxpr_graph``, ``compiled``), the notebook cell table (``cells``)
and the in-child confinement (``confine``). It imports nothing from the grader but the wire
(``grader.wire``) and the errors (tests/test_layout.py checks). Kept empty: the child must
start fast."""
