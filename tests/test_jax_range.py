"""The declared JAX range (#44 point 2): pyproject.toml admits a range, constraints.txt pins the
versions `make install` uses, the children's XLA options suit the installed jaxlib, and what the
child makes for JAX 0.8 (grader.child.jax_version) is JAX's own code split as 0.9 splits it.
Validating the catalogue under the range's ends is `make compat`'s (docs/compatibility.md)."""
from __future__ import annotations

import importlib.util
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

from grader.child.jax_version import closed_jaxpr_class, run_python_pjit
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


# What JAX 0.8's pjit holds where 0.9 has _run_python_pjit: the helper that infers a call's
# parameters, then runs it (a reduced copy of its shape, with the names the split relies on).
PJIT_08 = '''
calls = []

def _infer_params(fun, jit_info, args, kwargs):
    calls.append(("infer", fun.__name__))
    return {"params": jit_info}, [a * 10 for a in args]

def _pjit_call_impl_python(*args_flat, **params):
    calls.append(("impl", args_flat))
    return [sum(args_flat)], "executable"

def _python_pjit_helper(fun, jit_info, *args, **kwargs):
  p, args_flat = _infer_params(fun, jit_info, args, kwargs)
  out_flat, compiled = _pjit_call_impl_python(*args_flat, **p)
  return out_flat[0], out_flat, compiled, p

def cache_miss(fun, *args):
  return _python_pjit_helper(fun, {"name": "f"}, *args)
'''


def _module_from(tmp_path: Path, name: str, source: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_jax_08_pjit_gets_the_run_function_of_jax_09_and_its_hooks_are_called(tmp_path):
    pjit = _module_from(tmp_path, "fake_pjit_08", PJIT_08)

    def f(x, y):
        return x + y

    assert pjit.cache_miss(f, 1, 2)[0] == 30  # as JAX 0.8 runs it
    run = run_python_pjit(pjit)
    assert run is pjit._run_python_pjit and run({"name": "f"}, [4, 5], f, (), {})[0] == 9
    seen = []

    def hooked(p, args_flat, fun, args, kwargs):  # what grader.child.route_jit puts there
        seen.append((fun.__name__, list(args_flat), args))
        return run(p, args_flat, fun, args, kwargs)

    pjit._run_python_pjit = hooked
    pjit.calls.clear()
    assert pjit.cache_miss(f, 1, 2)[0] == 30  # the same result, now through the hook
    assert seen == [("f", [10, 20], (1, 2))]
    assert pjit.calls == [("infer", "f"), ("impl", (10, 20))]  # names looked up in the module, hooks included
    assert run_python_pjit(pjit) is hooked  # where it exists, it is taken as it is


def test_a_pjit_without_either_name_is_refused(tmp_path):
    pjit = _module_from(tmp_path, "fake_pjit_other", "def _python_pjit_helper(fun, jit_info, *args, **kwargs):\n"
                                                    "    return fun(*args)\n")
    try:
        run_python_pjit(pjit)
    except AttributeError as error:
        assert "_infer_params" in str(error)
    else:
        raise AssertionError("a helper of another shape was split anyway")


def test_closed_jaxpr_class_is_the_one_make_jaxpr_returns():
    import jax
    from jax._src import core
    assert isinstance(jax.make_jaxpr(lambda x: x + 1)(1.0), closed_jaxpr_class(core))
