"""What a student's function takes and gives back, declared once per exercise.

An exercise's ``checks.py`` declares a :class:`Signature`: named parameters, each an
:class:`Array` (dtype and a shape whose entries are sizes or dimension names shared between
parameters: ``x: float32[n, k]`` and ``w: float32[k, m]``), a :class:`Scalar`, a :class:`Key`
(a JAX PRNG key) or a pytree of these (dicts and tuples), and the structure it returns.

Arguments are plain Python in the grader's process (NumPy arrays, numbers, :class:`KeySeed`,
dicts and tuples of them), keyed by parameter name. Everything here works leaf by leaf on the
*paths* JAX's ``jax.tree_util.keystr`` would print (``params['dense']['kernel']``, ``batch[0]``),
so a report, a structure target and the child all name the same leaf the same way. The grader's
process never imports JAX; the child builds the JAX values (``grader.child.server``).
"""
from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Mapping, Union

import numpy as np

from grader.errors import ExerciseError
from grader.wire import encode_array


@dataclass(frozen=True)
class Array:
    """A JAX array: ``shape`` holds sizes (ints) and dimension names (str) that every parameter
    sharing the name must agree on; ``"n k"`` is short for ``("n", "k")``."""
    dtype: str = "float32"
    shape: tuple[int | str, ...] | str = ()

    def __post_init__(self) -> None:
        if isinstance(self.shape, str):
            object.__setattr__(self, "shape", tuple(self.shape.replace(",", " ").split()))
        try:
            np.dtype(self.dtype)
        except TypeError:
            raise ExerciseError(f"Array(dtype={self.dtype!r}) is not a NumPy dtype; use e.g. 'float32'") from None
        for entry in self.shape:
            if not (isinstance(entry, str) and entry.isidentifier()) and not (isinstance(entry, int) and entry >= 0):
                raise ExerciseError(f"Array shape entry {entry!r}: use a size (an int >= 0) or a dimension name")

    def text(self) -> str:
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"


@dataclass(frozen=True)
class Scalar:
    """A Python number: ``kind`` is ``"float"`` or ``"int"``. It travels as a Python value and
    is static when the function is traced (as it is for ``jax.jit`` with ``static_argnums``)."""
    kind: Literal["float", "int"] = "float"

    def text(self) -> str:
        return self.kind


@dataclass(frozen=True)
class Key:
    """A typed JAX PRNG key, ``jax.random.key(seed)``; the grader draws the seed."""

    def text(self) -> str:
        return "key"


Spec = Union[Array, Scalar, Key, Mapping[str, "Spec"], tuple["Spec", ...]]


@dataclass(frozen=True)
class KeySeed:
    """The value of a :class:`Key` parameter on the grader's side: the child calls
    ``jax.random.key(seed)``."""
    seed: int


@dataclass(frozen=True)
class Signature:
    """The student's function: its parameters in order and what it returns. Build it with
    ``Signature({"x": Array("float32", "n k"), "w": Array("float32", "k m")}, returns=Array("float32", "n m"))``."""
    parameters: Mapping[str, Spec]
    returns: Spec = field(default_factory=Array)
    # The graded name is a factory (``make_step()``): called once with no arguments, it returns
    # the function that takes ``parameters``, which the grader then calls as often as it likes
    # (a training step built with its configuration, jitted once).
    factory: bool = False

    def __post_init__(self) -> None:
        if not self.parameters:
            raise ExerciseError("Signature: declare at least one parameter")
        for name, spec in self.parameters.items():
            if not name.isidentifier():
                raise ExerciseError(f"Signature: parameter name {name!r} is not a Python identifier")
            _check_spec(spec, name)
        _check_spec(self.returns, "returns")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.parameters)

    def text(self, function: str) -> str:
        """How the statement writes the function: ``f(x: jax.Array, w: jax.Array) -> jax.Array``."""
        params = ", ".join(f"{name}: {_annotation(spec)}" for name, spec in self.parameters.items())
        if self.factory:
            return f"{function}() -> Callable[[{params}], {_annotation(self.returns)}]"
        return f"{function}({params}) -> {_annotation(self.returns)}"

    def call_text(self, function: str) -> str:
        """How the grader calls it: ``f(x, w)``, or ``make_step()(params, lr)`` for a factory."""
        return f"{function}{'()' if self.factory else ''}({', '.join(self.names)})"

    def leaf_specs(self) -> dict[str, Spec]:
        """Every declared leaf by its path (``x``, ``params['dense']['kernel']``), in call order."""
        return {name + rest: leaf for name, spec in self.parameters.items() for rest, leaf in flatten_spec(spec)}

    def dims_of(self, arguments: Mapping[str, Any]) -> dict[str, int]:
        """The dimension sizes ``arguments`` bind; raises ValueError when they do not fit."""
        problem, dims = _bind(self.parameters, arguments)
        if problem:
            raise ValueError(problem)
        return dims

    def problem(self, arguments: Any, what: str = "the arguments") -> str | None:
        """Why ``arguments`` do not fit the declared parameters, or None."""
        if not isinstance(arguments, Mapping):
            return f"{what} must be a dict from parameter name to value, not {type(arguments).__name__}"
        if list(arguments) != list(self.names) and set(arguments) != set(self.names):
            return f"{what} name {sorted(arguments)}; the signature declares {list(self.names)}"
        return _bind(self.parameters, arguments)[0]

    def ordered(self, arguments: Mapping[str, Any]) -> list[Any]:
        return [arguments[name] for name in self.names]


def _annotation(spec: Spec) -> str:
    if isinstance(spec, Array):
        return "jax.Array"
    if isinstance(spec, Scalar):
        return spec.kind
    if isinstance(spec, Key):
        return "jax.Array"
    if isinstance(spec, Mapping):
        return "dict"
    return "tuple"


def _check_spec(spec: Any, where: str) -> None:
    if isinstance(spec, (Array, Scalar, Key)):
        return
    if isinstance(spec, Mapping):
        for key, value in spec.items():
            if not isinstance(key, str):
                raise ExerciseError(f"{where}: dict keys of a parameter tree must be strings, got {key!r}")
            _check_spec(value, f"{where}[{key!r}]")
        return
    if isinstance(spec, tuple):
        for index, value in enumerate(spec):
            _check_spec(value, f"{where}[{index}]")
        return
    raise ExerciseError(f"{where}: {spec!r} is not Array(...), Scalar(...), Key() or a dict/tuple of them")


# -- paths, in jax.tree_util.keystr's spelling ----------------------------------------------------
def key_text(key: str | int) -> str:
    return f"[{key!r}]"


def flatten(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) for every leaf of an argument tree, in JAX's order (dict keys sorted).
    None is an empty subtree, as in JAX."""
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield from flatten(value[key], path + key_text(key))
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from flatten(item, path + key_text(index))
    elif value is not None:
        yield path, value


def flatten_spec(spec: Any, path: str = "") -> Iterator[tuple[str, Spec]]:
    if isinstance(spec, Mapping) and not isinstance(spec, (Array, Scalar, Key)):
        for key in sorted(spec):
            yield from flatten_spec(spec[key], path + key_text(key))
    elif isinstance(spec, tuple):
        for index, item in enumerate(spec):
            yield from flatten_spec(item, path + key_text(index))
    else:
        yield path, spec


def argument_leaves(arguments: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Every leaf of every argument, named ``param`` or ``param['key'][0]``, in call order."""
    return [(name + rest, leaf) for name, value in arguments.items() for rest, leaf in flatten(value)]


def with_leaf(arguments: Mapping[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``arguments`` with the leaf at ``path`` (as ``argument_leaves`` names it) replaced by ``value``."""
    def rebuilt(tree: Any, at: str) -> Any:
        if isinstance(tree, Mapping):
            return {k: rebuilt(v, at + key_text(k)) for k, v in tree.items()}
        if isinstance(tree, (tuple, list)):
            return type(tree)(rebuilt(v, at + key_text(i)) for i, v in enumerate(tree))
        return value if at == path else tree

    return {name: rebuilt(tree, name) for name, tree in arguments.items()}


def is_within(path: str, prefix: str) -> bool:
    """Whether the leaf at ``path`` belongs to the (sub)tree named ``prefix``."""
    return path == prefix or (path.startswith(prefix) and path[len(prefix)] == "[")


# -- fitting values to the declaration --------------------------------------------------------------
def _bind(spec: Any, value: Any, path: str = "", dims: dict[str, int] | None = None) -> tuple[str | None, dict[str, int]]:
    dims = {} if dims is None else dims
    where = path or "the arguments"
    if isinstance(spec, Array):
        if not isinstance(value, np.ndarray):
            return f"{where} must be a NumPy array ({spec.text()}), not {type(value).__name__}", dims
        if value.dtype != np.dtype(spec.dtype):
            return f"{where} has dtype {value.dtype}; the signature declares {spec.text()}", dims
        if value.ndim != len(spec.shape):
            return f"{where} has shape {value.shape}; the signature declares {spec.text()}", dims
        for size, entry in zip(value.shape, spec.shape):
            if isinstance(entry, int) and size != entry:
                return f"{where} has shape {value.shape}; the signature declares {spec.text()}", dims
            if isinstance(entry, str):
                if dims.setdefault(entry, size) != size:
                    return (f"{where} has shape {value.shape}, so {entry} = {size}, but another argument "
                            f"makes {entry} = {dims[entry]}"), dims
        return None, dims
    if isinstance(spec, Scalar):
        wanted = int if spec.kind == "int" else float
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (wanted is int and isinstance(value, float)):
            return f"{where} must be a Python {spec.kind}, not {type(value).__name__}", dims
        return None, dims
    if isinstance(spec, Key):
        return (None if isinstance(value, KeySeed) else f"{where} must be a KeySeed(seed), not "
                f"{type(value).__name__}"), dims
    if isinstance(spec, Mapping):
        if not isinstance(value, Mapping) or set(value) != set(spec):
            got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
            return f"{where} must be a dict with keys {sorted(spec)}, not {got}", dims
        for key in spec:
            problem, dims = _bind(spec[key], value[key], f"{path}{key_text(key)}" if path else key, dims)
            if problem:
                return problem, dims
        return None, dims
    if not isinstance(value, (tuple, list)) or len(value) != len(spec):
        return f"{where} must be a tuple of {len(spec)} items", dims
    for index, (item_spec, item) in enumerate(zip(spec, value)):
        problem, dims = _bind(item_spec, item, path + key_text(index), dims)
        if problem:
            return problem, dims
    return None, dims


def resolve_shape(spec: Array, dims: Mapping[str, int]) -> tuple[int, ...]:
    """The concrete shape of ``spec`` for the given dimension sizes."""
    return tuple(entry if isinstance(entry, int) else dims[entry] for entry in spec.shape)


# -- the channel: arguments to the child, as JSON ---------------------------------------------------
def encode(value: Any) -> dict[str, Any]:
    """A JSON-able tree for the child, which rebuilds it with JAX values (``grader.child.server``
    ``Child.build``); arrays in the wire's one codec."""
    if isinstance(value, np.ndarray):
        return {"kind": "array", **encode_array(value)}
    if isinstance(value, KeySeed):
        return {"kind": "key", "seed": int(value.seed)}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "int", "value": value}
    if isinstance(value, float):
        return {"kind": "float", "value": value}
    if isinstance(value, Mapping):
        return {"kind": "dict", "items": [[str(k), encode(value[k])] for k in value]}
    if isinstance(value, (tuple, list)):
        return {"kind": type(value).__name__, "items": [encode(v) for v in value]}
    if value is None:
        return {"kind": "none"}
    raise TypeError(f"an argument of type {type(value).__name__} cannot be sent to the child")


# -- reports: an argument as the Python expression that rebuilds it ---------------------------------
INLINE_ELEMENTS = 64  # larger arrays are written as their compressed bytes (still valid Python)


def _float_text(value: float) -> str:
    if np.isnan(value):
        return "jnp.nan"
    if np.isinf(value):
        return "jnp.inf" if value > 0 else "-jnp.inf"
    return repr(float(value))


def literal(value: Any) -> str:
    """A Python expression (with ``np``, ``jnp``, ``jax``, ``base64``, ``zlib`` imported) that
    rebuilds ``value`` exactly, whatever its size: small arrays element by element, large ones
    from their zlib-compressed bytes."""
    if isinstance(value, np.ndarray):
        dtype = value.dtype.name
        if value.size <= INLINE_ELEMENTS:
            if value.dtype.kind == "f":
                items = ", ".join(_float_text(v) for v in value.ravel().tolist())
            else:
                items = ", ".join(repr(v) for v in value.ravel().tolist())
            flat = f"jnp.array([{items}], dtype=jnp.{dtype})"
            return flat if value.ndim == 1 else f"{flat}.reshape{tuple(value.shape)}"
        packed = base64.b64encode(zlib.compress(np.ascontiguousarray(value).tobytes(), 9)).decode("ascii")
        return (f"jnp.asarray(np.frombuffer(zlib.decompress(base64.b64decode('{packed}')), "
                f"dtype=np.{dtype}).reshape({tuple(value.shape)}))")
    if isinstance(value, KeySeed):
        return f"jax.random.key({value.seed})"
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)


def short(value: Any, limit: int = 12) -> str:
    """A readable one-line view of an argument for messages (not necessarily valid Python)."""
    if isinstance(value, np.ndarray):
        if value.size <= limit:
            return literal(value)
        head = ", ".join(_float_text(v) if value.dtype.kind == "f" else repr(v) for v in value.ravel()[:limit].tolist())
        return f"<{value.dtype.name} array of shape {tuple(value.shape)} starting [{head}, ...]>"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {short(v, limit)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(short(v, limit) for v in value) + ("," if len(value) == 1 else "") + ")"
    return literal(value)
