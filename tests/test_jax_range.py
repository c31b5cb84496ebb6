"""The declared JAX range (#44 point 2): pyproject.toml admits a range, constraints.txt pins the
versions `make install` uses, the children's XLA options suit the installed jaxlib, and a child
on a JAX below the range stops, naming the range (grader.child.jax_version).
Validating the catalogue under the range's ends is `make compat`'s (docs/compatibility.md)."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import types
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from grader.child.jax_version import (SUPPORTED, closed_jaxpr_class, in_range, installed_jax, range_warning,
                                      run_python_pjit)
from grader.xla_options import release_of, xla_flags

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


def test_in_range_reads_the_declared_clauses():
    for version, expected in [("0.8.3", False), ("0.9.0", True), ("0.9.2", True), ("0.10.2", True), ("0.11.1", True),
                              ("0.11.2", False), ("0.12.0.1", True), ("0.13.0", False), ("0.9.0rc1", True)]:
        assert in_range(version) is expected, version
    assert range_warning("0.10.2") is None and range_warning(None) is None
    assert range_warning(installed_jax()) is None  # what make install installed is in the range


@pytest.mark.slow
def test_check_warns_in_one_line_under_a_jax_outside_the_range(tmp_path):
    """The installed JAX as importlib.metadata reads it, made 0.11.2 by a dist-info found first
    on the path (the JAX that grades is still the real one): one warning line, the same grade."""
    info = tmp_path / "site" / "jax-0.11.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jax\nVersion: 0.11.2\n")
    solution = tmp_path / "sgd_step.py"
    solution.write_text((REPO / "exercises" / "sgd_step" / "reference.py").read_text())
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(solution), "-e", "sgd_step"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": f"{tmp_path / 'site'}:{REPO}", "JAXGRADE_CACHE": "off"})
    assert "all checks passed" in done.stdout, done.stdout + done.stderr
    assert [line for line in done.stderr.splitlines() if "warning" in line] == [
        "jaxgrade: warning: JAX 0.11.2 is outside the releases jaxgrade is measured on (jax>=0.9,!=0.11.2,<0.13): "
        "grades may be wrong (pip install -c constraints.txt jaxgrade; docs/compatibility.md)"], done.stderr
