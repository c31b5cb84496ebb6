"""The declared JAX range (#44 point 2): pyproject.toml admits a range, constraints.txt pins the
versions `make install` uses, the children's XLA options suit the installed jaxlib, and a child
on a JAX below the range stops, naming the range (grader.child.jax_version).
Validating the catalogue under the range's ends is `make compat`'s (docs/compatibility.md)."""
from __future__ import annotations

import tomllib
import types
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from grader.child.jax_version import SUPPORTED, closed_jaxpr_class, run_python_pjit
from grader.sandbox.process import release_of, xla_flags

REPO = Path(__file__).resolve().parent.parent


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, pinned = line.partition("==")
            assert pinned and " " not in line, f"constraints.txt: not an exact pin: {line!r}"
            pins[name.lower().replace("_", "-")] = pinned
    return pins


def test_constraints_pin_what_grading_depends_on_within_the_declared_range():
    pins = _constraints()
    for name in ("jax", "jaxlib", "numpy", "hypothesis", "ml-dtypes", "scipy", "opt-einsum", "jinja2", "nbformat",
                 "rich"):
        assert name in pins, f"constraints.txt pins no {name}"
    declared = [Requirement(r) for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]
    for requirement in declared:
        key = requirement.name.lower().replace("_", "-")
        assert requirement.specifier.contains(pins[key]), f"constraints.txt's {key}=={pins[key]} is outside " \
                                                          f"pyproject.toml's {requirement}"
    jax = next(r for r in declared if r.name == "jax")
    assert not any(s.operator == "==" for s in jax.specifier), "pyproject.toml must declare a range of JAX"


def test_make_install_installed_the_pinned_versions():
    pins = _constraints()
    for name in ("jax", "jaxlib", "numpy", "hypothesis", "ml-dtypes"):
        assert version(name) == pins[name], f"{name} {version(name)} installed, constraints.txt pins {pins[name]}"


def test_xla_options_suit_the_jaxlib():
    assert release_of("0.12.0.1") == (0, 12, 0, 1) and release_of("0.9.0rc1") == (0, 9, 0)
    # jaxlib 0.11 and later refuse to start with the older emitters' switch
    assert xla_flags("0.10.2") == "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
    assert xla_flags("0.8.3").endswith("--xla_cpu_use_fusion_emitters=false")
    assert xla_flags("0.11.2") == xla_flags("0.12.0.1") == xla_flags(None) == "--xla_backend_optimization_level=0"


def test_the_child_takes_run_python_pjit_where_it_is_and_refuses_a_jax_without_it():
    from jax._src import pjit
    assert run_python_pjit(pjit) is pjit._run_python_pjit
    older = types.ModuleType("pjit_of_jax_08")  # JAX 0.8 runs the call inside _python_pjit_helper
    older._python_pjit_helper = lambda fun, jit_info, *args, **kwargs: None
    with pytest.raises(RuntimeError, match=r"JAX \S+ is not supported: jaxgrade grades with jax>=0.9,!=0.11.2,<0.13"):
        run_python_pjit(older)


def test_the_child_names_the_range_pyproject_declares():
    declared = [Requirement(r) for r in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]]
    assert Requirement(SUPPORTED) == next(r for r in declared if r.name == "jax")


def test_closed_jaxpr_class_is_the_one_make_jaxpr_returns():
    import jax
    from jax._src import core
    assert isinstance(jax.make_jaxpr(lambda x: x + 1)(1.0), closed_jaxpr_class(core))
