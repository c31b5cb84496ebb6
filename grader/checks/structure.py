"""``structure``: what the function really did with its argument, not just what it returned.

Three independent observations, all taken in the child by mechanisms in place before the
submission was imported: the program JAX traces for it, the placements JAX performed while
it really ran, and the sharding of the array it returned. The parent combines them into one
``Evidence``; if they contradict each other (code that behaves differently when traced),
every structure check fails and says so. Code that cannot be traced is judged from the real
call alone.
"""
from __future__ import annotations

import dataclasses
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from grader.checks.base import Check, Context
from grader.checks.returns import probe_call
from grader.outcome import Category, Outcome
from grader.observe.program import Program

Spec = tuple[Any, ...]


def spec_key(spec: Any) -> Spec:
    """A hashable form of a PartitionSpec as the child describes it (lists for tuples)."""
    return tuple(tuple(p) if isinstance(p, list) else p for p in spec)


def spec_text(spec: Spec) -> str:
    return f"PartitionSpec({', '.join(repr(p) for p in spec)})"


def sharding_text(sharding: dict[str, Any], names: list[str]) -> str:
    kind = sharding.get("type")
    if kind == "NamedSharding":
        devices = ", ".join(names[i] if i < len(names) else f"#{i}" for i in sharding.get("mesh_devices", []))
        return (f"NamedSharding(mesh over [{devices}] with axes {tuple(sharding.get('axis_names', []))}, "
                f"{spec_text(spec_key(sharding.get('spec', [])))})")
    if kind == "default":
        return "the default device"
    devices = ", ".join(names[i] if i < len(names) else f"#{i}" for i in sharding.get("devices", []))
    return f"{kind}({devices})"


# How each way of giving a value a sharding (grader.observe.program.VIAS) reads in a message.
VIA_TEXT = {
    "device_put": "jax.device_put({operand}, NamedSharding({mesh}, {spec}))",
    "jit_in": "jax.jit(f, in_shardings=NamedSharding({mesh}, {spec})) applied to {operand}",
    "jit_out": "jax.jit(f, out_shardings=NamedSharding({mesh}, {spec}))",
    "constraint": "jax.lax.with_sharding_constraint({operand}, NamedSharding({mesh}, {spec}))",
    "shard_map_in": "jax.shard_map(f, mesh={mesh}, in_specs={spec}, ...) applied to {operand}",
    "shard_map_out": "jax.shard_map(f, mesh={mesh}, out_specs={spec}, ...)",
}
VIA_NAME = {"device_put": "jax.device_put", "jit_in": "the in_shardings of jax.jit",
            "jit_out": "the out_shardings of jax.jit", "constraint": "jax.lax.with_sharding_constraint",
            "shard_map_in": "the in_specs of jax.shard_map", "shard_map_out": "the out_specs of jax.shard_map"}
# Which placed values a target counts, by ``NamedShardingTarget.operand``.
OPERANDS = ("x", "x_exact", "derived")


@dataclass(frozen=True, kw_only=True)
class NamedShardingTarget:
    """The placement a task asks for. ``devices`` is a (start, stop) slice of jax.devices();
    ``also_accept`` maps other specs that lay the data out the same way to an advisory note.

    ``via`` says how the sharding is given (a key of ``VIA_TEXT``). ``operand`` says which
    value is placed: ``"x"`` the argument or a same-shaped copy of it, ``"x_exact"`` the
    argument itself (so computing first and placing the result does not count),
    ``"derived"`` any value computed from x. ``inside`` names a transformation the placement
    must happen in (``"jit"``: a sharding constraint only means something under jit).
    ``label`` names the placed value in messages."""
    axis_names: tuple[str, ...]
    spec: Spec = ()
    devices: tuple[int | None, int | None] = (None, None)
    mesh_shape: tuple[int, ...] | None = None
    also_accept: dict[Spec, str] = field(default_factory=dict)
    via: str = "device_put"
    operand: str = "x"
    inside: str | None = None
    label: str = "x"

    def __post_init__(self) -> None:
        if self.via not in VIA_TEXT or self.operand not in OPERANDS:
            raise ValueError(f"NamedShardingTarget: via must be one of {sorted(VIA_TEXT)} and operand one of "
                             f"{OPERANDS}; got via={self.via!r}, operand={self.operand!r}")

    def counts(self, placement: "Placement") -> bool:
        """Is ``placement`` one this target judges (the right way, of the right value)?"""
        if placement.via != self.via:
            return False
        if self.operand == "x_exact":
            return bool(placement.exact)
        if self.operand == "derived":
            return placement.derived is not False
        return placement.of_argument

    def device_ids(self, available: int) -> list[int]:
        return list(range(available))[slice(*self.devices)]

    def devices_text(self) -> str:
        start, stop = ("" if v is None else str(v) for v in self.devices)
        return "jax.devices()" if self.devices == (None, None) else f"jax.devices()[{start}:{stop}]"

    def mesh_text(self) -> str:
        devices = f"np.array({self.devices_text()})"
        if self.mesh_shape is not None and len(self.mesh_shape) > 1:
            devices += f".reshape{self.mesh_shape}"
        return f"Mesh({devices}, {self.axis_names!r})"

    def text(self) -> str:
        text = VIA_TEXT[self.via].format(operand=self.label, mesh=self.mesh_text(), spec=spec_text(self.spec))
        return f"{text} inside jax.{self.inside}" if self.inside else text


@dataclass(frozen=True)
class Placement:
    sharding: dict[str, Any]
    of_argument: bool
    input_shape: tuple[int, ...] | None
    feeds_result: bool | None  # None: not known (nothing to tell it by)
    source: str  # "trace" | "call"
    via: str = "device_put"  # see grader.observe.program.VIAS
    exact: bool | None = None  # the placed value is the argument itself (None: not known)
    derived: bool | None = None  # the placed value is computed from the argument (None: not known)
    within: tuple[str, ...] = ()  # the transformations it happened inside (trace only)


@dataclass(frozen=True)
class Evidence:
    placements: tuple[Placement, ...]
    unobservable: str | None
    result_sharding: dict[str, Any] | None
    traced: bool
    trace_error: str | None
    disagreement: str | None
    device_names: list[str]

    def chosen(self, target: NamedShardingTarget | None = None) -> Placement | None:
        """The placement to judge: of the value the target names (the argument by default),
        made inside what the target asks for; one the result is computed from if any, and
        among those the one closest to the target."""
        ours = [p for p in self.placements if (target.counts(p) if target else p.of_argument)]
        if target is not None and target.inside:
            ours = [p for p in ours if target.inside in p.within]
        count = len(self.device_names)
        ranked = sorted(ours, key=lambda p: (not p.feeds_result, -_closeness(p.sharding, target, count)))
        return ranked[0] if ranked else None


def _closeness(sharding: dict[str, Any], target: NamedShardingTarget | None, available: int) -> int:
    """How many of the target's properties a sharding has (used only to rank candidates)."""
    if target is None or sharding.get("type") != "NamedSharding":
        return 0
    return sum((tuple(sharding.get("axis_names", [])) == target.axis_names,
                spec_key(sharding.get("spec", [])) == target.spec,
                target.mesh_shape is None or tuple(sharding.get("mesh_shape", [])) == target.mesh_shape,
                sorted(sharding.get("mesh_devices") or []) == target.device_ids(available)))


def _devices_of(sharding: dict[str, Any]) -> list[int] | None:
    return sharding.get("mesh_devices") if sharding.get("type") == "NamedSharding" else sharding.get("devices")


def _same_mesh(a: dict[str, Any], b: dict[str, Any] | None) -> bool:
    """Could an array placed on ``a`` have produced a result that lives on ``b``? A sum over a
    mesh stays a NamedSharding over that mesh; a sum over one device stays on that device."""
    if not b or _devices_of(a) is None or sorted(_devices_of(a) or []) != sorted(_devices_of(b) or []):
        return False
    if a.get("type") == "NamedSharding" or b.get("type") == "NamedSharding":
        return a.get("type") == b.get("type") and a.get("axis_names") == b.get("axis_names")
    return True


def _canonical(sharding: dict[str, Any]) -> str:
    return repr(sorted((k, repr(v)) for k, v in sharding.items() if k != "memory_kind"))


def gather(context: Context) -> Evidence:
    returned = probe_call(context)
    names = list(context.session.environment.get("devices", []))
    shape = tuple(context.probe.shape)
    result_sharding = (returned.value or {}).get("sharding") if returned.ok else None

    called = []
    for p in returned.placements:
        input_shape = tuple(p["input_shape"]) if p.get("input_shape") is not None else None
        eager = p.get("phase") == "eager"
        of_argument = bool(p.get("of_argument")) if eager else input_shape == shape
        called.append(Placement(p.get("sharding", {}), of_argument, input_shape, None, "call",
                                exact=of_argument if eager else None))

    trace = context.memo("trace", lambda: context.session.trace(context.probe)) if returned.ok \
        else {"ok": False, "error": returned.describe()}
    traced = []
    if trace.get("ok"):
        program = Program.from_data(trace["program"])
        from_argument = program.derived_from(program.inputs[:1])
        for found in program.all_placements():
            source, placed = found.source, found.placed
            input_shape = program.shapes.get(source) if source is not None else None
            feeds = any(o in program.derived_from([placed]) for o in program.outputs if o is not None) \
                if placed is not None else False
            traced.append(Placement(found.sharding, source in from_argument and input_shape == shape,
                                    input_shape, feeds, "trace", via=found.via,
                                    exact=source is not None and source in program.inputs[:1],
                                    derived=source in from_argument, within=found.within))

    disagreement = None
    if trace.get("ok"):
        put = [p for p in traced if p.via == "device_put"]  # the only way a real call is observed
        seen_traced = {_canonical(p.sharding) for p in put if p.of_argument}
        seen_called = {_canonical(p.sharding) for p in called if p.of_argument}
        feeding = [p for p in traced if p.of_argument and p.feeds_result]
        if seen_called and seen_called != seen_traced:
            disagreement = ("Your function placed x differently when traced than when called: traced "
                            f"{_list([p for p in put if p.of_argument], names)}; called "
                            f"{_list([p for p in called if p.of_argument], names)}.")
        elif seen_traced and called and not seen_called:  # e.g. places x when traced, the sum when called
            shapes = ", ".join(f"a value of shape {p.input_shape}" for p in called)
            disagreement = ("When traced, your function placed x on "
                            f"{_list([p for p in put if p.of_argument], names)}; when really called it placed "
                            f"only {shapes}, never x.")
        elif feeding and all(p.via == "device_put" for p in feeding) and returned.value \
                and returned.value.get("kind") == "jax_array" \
                and not any(_same_mesh(p.sharding, result_sharding) for p in feeding):
            disagreement = ("When traced, your function computed its result from x placed on "
                            f"{sharding_text(feeding[-1].sharding, names)}, but the array it really returned "
                            f"lives on {sharding_text(result_sharding or {}, names)}.")
        placements = traced
    else:
        placements = [Placement(p.sharding, p.of_argument, p.input_shape,
                                _same_mesh(p.sharding, result_sharding), "call", exact=p.exact) for p in called]
    unobservable = None if returned.ok else f"your function {returned.describe()}"
    return Evidence(tuple(placements), unobservable, result_sharding, bool(trace.get("ok")),
                    None if trace.get("ok") else str(trace.get("error")), disagreement, names)


def _list(placements: list[Placement], names: list[str]) -> str:
    return ", ".join(sharding_text(p.sharding, names) for p in placements) or "nowhere"


def evidence(context: Context) -> Evidence:
    return context.memo("structure", lambda: gather(context))


@dataclass(frozen=True, kw_only=True)
class StructureCheck(Check):
    """Shared by the placement checks: they all judge the same chosen placement."""
    target: NamedShardingTarget
    category: ClassVar[Category] = "structure"

    def judge(self, context: Context) -> Outcome:
        found = evidence(context)
        if found.unobservable:
            full = Outcome.failed(f"What your function does could not be observed: {found.unobservable}.",
                                  expected=self.target.text(), observed=found.unobservable, hint_applies=False)
            return self._once(context, "unobservable", full)
        if found.disagreement:
            full = Outcome.failed(found.disagreement + " Grading needs the same behaviour both ways.",
                                  expected="the same placements when traced and when called",
                                  observed=found.disagreement)
            return self._once(context, "disagreement", full)
        chosen = found.chosen(self.target)
        if chosen is None:
            return self._once(context, ("absent", self.target), self.nothing_placed(found))
        return self.judge_placement(chosen, found, context)

    @staticmethod
    def _once(context: Context, reason: object, full: Outcome) -> Outcome:
        """The first structure check to fail for ``reason`` explains it in full; the others
        (which would have judged details of the same missing evidence) say so in one line."""
        explained = context.session.cache.setdefault("structure explained", [])
        if reason not in explained:
            explained.append(reason)
            return full
        why = (full.observed or "").rstrip(".")
        return dataclasses.replace(full, message=f"There is nothing to judge here: {why[:1].lower()}{why[1:]}.")

    def nothing_placed(self, found: Evidence) -> Outcome:
        target = self.target
        name, want = VIA_NAME[target.via], target.text()
        same_way = [p for p in found.placements if p.via == target.via]
        counted = [p for p in same_way if target.counts(p)]
        if counted and target.inside:
            observed = f"your function used {name} only outside jax.{target.inside}"
            advice = f"Use it inside the function you pass to jax.{target.inside}: {want}."
        elif same_way:
            shapes = ", ".join(f"a value computed from x (shape {p.input_shape})" if p.derived and not p.exact
                               else f"a value of shape {p.input_shape}" for p in same_way if not target.counts(p))
            whom = {"x": "x itself", "x_exact": "the argument x itself",
                    "derived": "a value computed from x"}[target.operand]
            observed = f"your function applied {name} to {shapes}, not to {whom}"
            advice = ("Place the argument x itself first, then compute on the placed array." if target.operand != "derived"
                      else f"Use {want}.")
        elif target.via == "device_put":
            observed = f"no jax.device_put of {target.label} happened"
            advice = f"Place {target.label} with {want} before computing."
        else:
            observed = f"your function never used {name}"
            advice = f"Use {want}."
        return Outcome.failed(f"{observed[0].upper()}{observed[1:]}. {advice}", expected=want, observed=observed)

    @abstractmethod
    def judge_placement(self, chosen: Placement, found: Evidence, context: Context) -> Outcome:
        """Judge the placement of x that the evidence singles out."""


@dataclass(frozen=True, kw_only=True)
class PlacedOnNamedSharding(StructureCheck):
    """x itself is placed with jax.device_put on a NamedSharding."""

    def judge_placement(self, chosen: Placement, found: Evidence, context: Context) -> Outcome:
        where = sharding_text(chosen.sharding, found.device_names)
        how = "traced program" if chosen.source == "trace" else "real call (the function could not be traced)"
        if chosen.sharding.get("type") == "NamedSharding":
            return Outcome.passed(f"{self.target.label} is placed with {VIA_NAME[chosen.via]} on {where} "
                                  f"(seen in the {how}).")
        return Outcome.failed(f"You placed {self.target.label} on {where}, which is not a NamedSharding over a mesh. "
                              f"Use {self.target.text()}.", expected=self.target.text(), observed=where)


@dataclass(frozen=True, kw_only=True)
class MeshMatches(PlacedOnNamedSharding):
    """The mesh holds exactly the asked-for devices, with the asked-for axis names."""

    def judge_placement(self, chosen: Placement, found: Evidence, context: Context) -> Outcome:
        if chosen.sharding.get("type") != "NamedSharding":
            return super().judge_placement(chosen, found, context)
        names = found.device_names
        want = self.target.device_ids(len(names))
        got = list(chosen.sharding.get("mesh_devices", []))
        axes = tuple(chosen.sharding.get("axis_names", []))
        shape = tuple(chosen.sharding.get("mesh_shape", []))
        problems = []
        if sorted(got) != sorted(want):
            problems.append(f"your mesh holds {_count(got, names)}; the task asks for "
                            f"{self.target.devices_text()} ({_count(want, names)})")
        if self.target.mesh_shape is not None and shape != self.target.mesh_shape:
            problems.append(f"your mesh has shape {shape}; the task asks for {self.target.mesh_shape}")
        if axes != self.target.axis_names:
            problems.append(f"your mesh's axis names are {axes}; the task asks for {self.target.axis_names}")
        if problems:
            text = "; ".join(problems)
            return Outcome.failed(text[0].upper() + text[1:] + ".",
                                  expected=self.target.mesh_text(),
                                  observed=f"a mesh over {_count(got, names)} with axes {axes}")
        return Outcome.passed(f"The mesh holds {_count(got, names)} with axis names {axes}.")


def _count(ids: list[int], names: list[str]) -> str:
    labels = [names[i] if i < len(names) else f"#{i}" for i in ids]
    if len(labels) > 4:
        labels = [labels[0], "…", labels[-1]]
    noun = "device" if len(ids) == 1 else "devices"
    return f"{len(ids)} {noun}: {' '.join(labels)}" if len(ids) > 1 else f"1 {noun}: {labels[0] if labels else '?'}"


@dataclass(frozen=True, kw_only=True)
class SpecMatches(PlacedOnNamedSharding):
    """The PartitionSpec is the asked-for one (or one the target accepts with a note)."""

    def judge_placement(self, chosen: Placement, found: Evidence, context: Context) -> Outcome:
        if chosen.sharding.get("type") != "NamedSharding":
            return super().judge_placement(chosen, found, context)
        got, label = spec_key(chosen.sharding.get("spec", [])), self.target.label
        if got == self.target.spec:
            return Outcome.passed(f"{label} is placed with {spec_text(got)}.")
        if got in self.target.also_accept:
            return Outcome.passed(f"{label} is placed with {spec_text(got)}.", advisory=self.target.also_accept[got])
        split = [p for p in got if p is not None]
        effect = f": it splits {label} along {', '.join(map(repr, split))}" if split else ": it splits nothing"
        return Outcome.failed(f"{label} is placed with {spec_text(got)}{effect}; the task asks for "
                              f"{spec_text(self.target.spec)}.", expected=spec_text(self.target.spec),
                              observed=spec_text(got))


@dataclass(frozen=True, kw_only=True)
class ResultFromPlacement(StructureCheck):
    """The returned value is computed from the placed array, not from the original x."""

    def judge_placement(self, chosen: Placement, found: Evidence, context: Context) -> Outcome:
        if chosen.feeds_result:
            how = "the traced program's dataflow" if chosen.source == "trace" else \
                "the sharding of the array it returned"
            return Outcome.passed(f"The result is computed from the placed array (seen in {how}).")
        if chosen.source == "trace" and self.target.label != "x":
            observed = (f"the result is not computed from what {VIA_NAME[chosen.via]} returned for "
                        f"{self.target.label}; that placed copy is never used")
        elif chosen.source == "trace":
            observed = "the result is computed from the original x; the placed copy is never used"
        else:
            observed = (f"the returned value lives on {sharding_text(found.result_sharding or {}, found.device_names)}"
                        if found.result_sharding else "the returned value is not a JAX array on the placed mesh")
        return Outcome.failed(f"{observed[0].upper()}{observed[1:]}. Compute the result from the placed array "
                              f"({VIA_NAME[chosen.via]} gives it), and place before computing, not after.",
                              expected="a result computed from the placed array", observed=observed)
