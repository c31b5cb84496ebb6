"""Where an array's blocks live, as plain data: what a failed placement or layout check carries
beside its words (the task's layout and the submission's), so that every format can draw them
(``grader.report.layout_picture``) and any other tool can read them from the JSON record.

It sits at the bottom of the package because a check's ``Outcome`` and the report's
``CheckResult`` both hold it; the checks compute it (``grader.observe.layouts.layout_of``)
and the renderers only draw it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Union

Range = tuple[int, int]  # [start, stop) of one dimension
SpecEntry = Union[str, tuple[str, ...], None]  # one entry of a PartitionSpec


@dataclass(frozen=True)
class Block:
    """One block of the array (its index range in every dimension) and the devices holding it
    (ids: positions in ``jax.devices()``; several when the block is replicated)."""
    index: tuple[Range, ...]
    devices: tuple[int, ...]


@dataclass(frozen=True)
class ArrayLayout:
    """An array of ``shape`` laid out over a mesh (``mesh_shape`` and ``axis_names``, empty for
    one device outside any mesh) by ``spec``: each distinct block once, in row-major order of
    their starts. ``device_names`` names every device id a block holds (``jax.devices()`` as
    the child listed it)."""
    shape: tuple[int, ...]
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    spec: tuple[SpecEntry, ...]
    blocks: tuple[Block, ...]
    device_names: tuple[str, ...]

    def name(self, device: int) -> str:
        return self.device_names[device] if 0 <= device < len(self.device_names) else f"#{device}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``expected_layout``/``observed_layout`` in ``jaxgrade.report/1``)."""
        return {"shape": list(self.shape), "mesh_shape": list(self.mesh_shape), "axis_names": list(self.axis_names),
                "spec": [list(e) if isinstance(e, tuple) else e for e in self.spec],
                "blocks": [{"index": [list(r) for r in b.index], "devices": list(b.devices)} for b in self.blocks],
                "device_names": list(self.device_names)}

    @classmethod
    def from_data(cls, data: object) -> ArrayLayout:
        """The layout whose ``to_dict`` (or ``dataclasses.asdict``) is ``data``, also after a JSON
        round trip; anything else is a ValueError."""
        try:
            assert isinstance(data, Mapping)
            spec = tuple(tuple(_texts(e)) if isinstance(e, (list, tuple)) else e for e in data["spec"])
            assert all(e is None or isinstance(e, (str, tuple)) for e in spec)
            blocks = tuple(Block(tuple((_count(a), _count(b)) for a, b in block["index"]),
                                 tuple(_count(d) for d in block["devices"])) for block in data["blocks"])
            return cls(tuple(_count(n) for n in data["shape"]), tuple(_count(n) for n in data["mesh_shape"]),
                       _texts(data["axis_names"]), spec, blocks, _texts(data["device_names"]))
        except (AssertionError, KeyError, TypeError, ValueError) as error:
            raise ValueError(f"a layout: not the fields of one ({error!r})") from None


def _count(value: object) -> int:
    assert isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value


def _texts(values: object) -> tuple[str, ...]:
    assert isinstance(values, (list, tuple)) and all(isinstance(v, str) for v in values)
    return tuple(values)
