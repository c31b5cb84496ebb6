"""Layouts drawn: which device holds which block of an array, in the manner of
``jax.debug.visualize_array_sharding``, beside the words of a failed placement or layout check.

A check's result carries the task's layout and the submission's as data
(``grader.array_layout.ArrayLayout``); this module only draws them. :func:`grid_of` turns one
into a :class:`Grid` (row and column index ranges, each cell's devices, and the same in words);
the text and Markdown reports draw grids with ``rich`` (box-drawing characters, or ASCII where
the output cannot show them), the HTML report and the notebook cell lay it out as a captioned
table whose ``aria-label`` is the words (``templates/_layout.html.j2``).

What does not fit a grid is still shown: of an array of three or more dimensions the two that
are split (or asked to be) are drawn; a dimension cut into more than ``MAX_CELLS`` blocks is
drawn in ``MAX_CELLS`` groups of neighbouring blocks; past ``MANY_DEVICES`` devices a cell
names its devices as ranges; a scalar or an empty array gets one line instead of a picture.
"""
from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.array_layout import ArrayLayout, Range

MAX_CELLS = 8  # blocks drawn along one dimension; more are drawn in groups
MANY_DEVICES = 16  # past this many devices, a cell names them as ranges
WIDTH = 80  # a terminal's width: two grids side by side within it, else one above the other
TITLES = ("What the task asks", "What your code did")


@dataclass(frozen=True)
class Grid:
    """One layout ready to draw. ``dims``: the array's dimensions drawn (rows, then columns; one
    for a vector, none when ``line`` replaces the picture); ``rows`` and ``columns``: each drawn
    row's and column's index range (``rows`` empty for a vector); ``cells``: the devices holding
    each cell, row by row; ``words``: all of it in a sentence (the caption); ``drawn``: which
    dimensions the rows and columns are, when the array has more than the grid shows; ``mesh``
    and ``spec``: as JAX writes them (``spec`` empty outside a mesh)."""
    title: str
    mesh: str
    spec: str
    drawn: str
    dims: tuple[int, ...]
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    words: str
    line: str | None = None


def spec_text(spec: Sequence[Any]) -> str:
    """A PartitionSpec as current JAX writes it: ``P('data', None)``."""
    return f"P({', '.join(map(repr, spec))})"


def drawn_dims(layouts: Iterable[ArrayLayout]) -> tuple[int, ...]:
    """The dimensions to draw of arrays laid out as ``layouts`` (one array, so one shape): all
    of a vector's or a matrix's; of a larger array the first two the layouts split (the first
    layout's first: what the task asks), else the last ones; every picture of one check shows
    the same two, in order."""
    layouts = list(layouts)
    ndim = len(layouts[0].shape) if layouts else 0
    if ndim <= 2:
        return tuple(range(ndim))
    split = [d for x in layouts for d in range(ndim)
             if d < len(x.spec) and x.spec[d] is not None or len({b.index[d] for b in x.blocks}) > 1]
    chosen = list(dict.fromkeys(split))[:2]
    chosen += [d for d in reversed(range(ndim)) if d not in chosen][:2 - len(chosen)]
    return tuple(sorted(chosen))


def devices_text(ids: Sequence[int], layout: ArrayLayout) -> str:
    """Devices by name: ``cpu:0``, ``cpu:0,1,2`` (one platform named once), and past
    ``MANY_DEVICES`` devices runs as ranges: ``cpu:0-15,32``."""
    ids = sorted(set(ids))
    names = [layout.name(d) for d in ids]
    prefix = names[0].rpartition(":")[0] + ":" if names and ":" in names[0] else ""
    numbers = [n[len(prefix):] for n in names]
    if not prefix or not all(n.startswith(prefix) and n[len(prefix):].isdigit() for n in names):
        return ", ".join(names)
    if _device_count(layout) > MANY_DEVICES:
        runs: list[list[int]] = []
        for number in map(int, numbers):
            if runs and number == runs[-1][-1] + 1:
                runs[-1].append(number)
            else:
                runs.append([number])
        numbers = [f"{r[0]}-{r[-1]}" if len(r) > 2 else ",".join(map(str, r)) for r in runs]
    return prefix + ",".join(numbers)


def _device_count(layout: ArrayLayout) -> int:
    return len({d for block in layout.blocks for d in block.devices})


def range_text(span: Range) -> str:
    return f"{span[0]}:{span[1]}"


def mesh_text(layout: ArrayLayout) -> str:
    """The mesh as JAX writes it, ``Mesh('data': 2, 'model': 4)``, or that there is none."""
    if not layout.mesh_shape:
        return "one device, no mesh"
    return f"Mesh({', '.join(f'{name!r}: {size}' for name, size in zip(layout.axis_names, layout.mesh_shape))})"


def grid_of(layout: ArrayLayout, dims: tuple[int, ...], title: str = "") -> Grid:
    """``layout`` as a grid over ``dims`` (from :func:`drawn_dims`)."""
    shape, mesh = layout.shape, mesh_text(layout)
    spec = spec_text(layout.spec) if layout.mesh_shape else ""
    summary = f"{mesh}, {spec}" if spec else mesh
    every = [d for b in layout.blocks for d in b.devices]
    if not shape or 0 in shape:
        what = "a scalar" if not shape else f"an empty array of shape {shape}"
        line = f"{what}, held whole by {devices_text(every, layout)} ({summary})"
        return Grid(title, mesh, spec, "", (), (), (), (), f"{title}: {line}." if title else f"{line}.", line)
    groups = [_groups(sorted({b.index[d] for b in layout.blocks})) for d in dims]
    cells = []
    for row in (groups[0] if len(dims) == 2 else [None]):
        cells.append(tuple(devices_text(_holders(layout, dims, (row, column) if row else (column,)), layout)
                           for column in groups[-1]))
    rows = tuple(range_text(_span(g)) for g in groups[0]) if len(dims) == 2 else ()
    columns = tuple(range_text(_span(g)) for g in groups[-1])
    drawn = ("" if len(dims) == len(shape) else
             f"rows: dimension {dims[0]}, columns: dimension {dims[1]} of {len(shape)}")
    words = (f"an array of shape {shape} on {summary}{'; ' + drawn if drawn else ''}: "
             + "; ".join(f"[{r + ', ' if r else ''}{c}] on {cell}" for r, line in zip(rows or ("",), cells)
                         for c, cell in zip(columns, line)))
    return Grid(title, mesh, spec, drawn, dims, rows, columns, tuple(cells),
                f"{title}: {words}." if title else f"{words}.")


def _groups(spans: list[Range]) -> list[list[Range]]:
    """``spans`` as at most ``MAX_CELLS`` groups of neighbours, as even as they go."""
    count = min(len(spans), MAX_CELLS)
    return [spans[len(spans) * i // count:len(spans) * (i + 1) // count] for i in range(count)]


def _span(group: list[Range]) -> Range:
    return group[0][0], group[-1][1]


def _holders(layout: ArrayLayout, dims: tuple[int, ...], groups: tuple[list[Range], ...]) -> list[int]:
    """The devices holding any block whose ranges in ``dims`` are among ``groups``."""
    return [d for b in layout.blocks if all(b.index[dim] in group for dim, group in zip(dims, groups))
            for d in b.devices]


def grids(expected: ArrayLayout | None, observed: ArrayLayout | None) -> list[Grid]:
    """The task's layout and the submission's (whichever a check has), drawn over the same
    dimensions, titled."""
    pairs = [(TITLES[0], expected), (TITLES[1], observed)]
    present = [(title, layout) for title, layout in pairs if layout is not None]
    dims = drawn_dims(layout for _, layout in present)
    return [grid_of(layout, dims, title) for title, layout in present]


def grid_text(grid: Grid, unicode: bool = True, width: int = WIDTH) -> str:
    """One grid drawn with ``rich`` within ``width`` columns: box-drawing characters, or ASCII
    (``+-|``) when not ``unicode``; its title, mesh and spec above it."""
    # As many lines for every grid of one check (a spec line even outside a mesh), so side by side they align.
    heading = "\n".join([*([grid.title + ":"] if grid.title else []), grid.mesh, grid.spec,
                         *([grid.drawn] if grid.drawn else [])])
    heading = "\n".join(wrapped for line in heading.split("\n")
                         for wrapped in textwrap.wrap(line, width, break_on_hyphens=False) or [""])
    if grid.line is not None:
        line = f"{grid.title}: {grid.line}" if grid.title else grid.line
        return line if unicode else _ascii(line)
    table = Table(box=box.SQUARE if unicode else box.ASCII, show_lines=True, show_edge=True, padding=(0, 1),
                  safe_box=not unicode)
    if grid.rows:
        table.add_column("", justify="right", no_wrap=True)
    for column in grid.columns:
        table.add_column(Text(column), justify="center", overflow="fold")  # wrapped, never cut short
    for label, cells in zip(grid.rows or ("",), grid.cells):
        table.add_row(*([Text(label)] if grid.rows else []), *(Text(cell) for cell in cells))
    # Into a string, never onto a screen: in a notebook's kernel rich would display it itself.
    console = Console(file=io.StringIO(), width=width, color_system=None, emoji=False, highlight=False,
                      legacy_windows=False, soft_wrap=False, force_jupyter=False, force_terminal=False)
    console.print(table)
    drawn = console.file.getvalue().rstrip("\n")  # type: ignore[attr-defined]
    return f"{heading}\n{drawn}" if unicode else _ascii(f"{heading}\n{drawn}")


def _ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode("ascii")


def pair_text(expected: ArrayLayout | None, observed: ArrayLayout | None, unicode: bool = True,
              width: int = WIDTH) -> str:
    """The check's layouts drawn as text, side by side where both fit in ``width`` columns,
    else one above the other; empty when the check has none."""
    drawn = [grid_text(g, unicode, width).split("\n") for g in grids(expected, observed)]
    if not drawn:
        return ""
    widths = [max(cell_len(line) for line in lines) for lines in drawn]
    if len(drawn) == 2 and sum(widths) + 4 <= width:
        height = max(len(lines) for lines in drawn)
        left, right = (lines + [""] * (height - len(lines)) for lines in drawn)
        return "\n".join((a + " " * (widths[0] - cell_len(a) + 4) + b).rstrip() for a, b in zip(left, right))
    return "\n\n".join("\n".join(lines) for lines in drawn)


def check_layouts(check: Mapping[str, Any]) -> tuple[ArrayLayout | None, ArrayLayout | None]:
    """A check's two layouts from a report's data (``Report.as_data``, escaped for display)."""
    def read(key: str) -> ArrayLayout | None:
        return None if check.get(key) is None else ArrayLayout.from_data(check[key])
    return read("expected_layout"), read("observed_layout")


def titled_grid(layout: Mapping[str, Any], title: str, beside: Mapping[str, Any] | None = None) -> Grid:
    """One layout from a report's data, titled, drawn over the dimensions it and ``beside`` (the
    layout it is compared with) share: how the class summary draws each wrong layout once."""
    drawn = ArrayLayout.from_data(layout)
    dims = drawn_dims([drawn] + ([ArrayLayout.from_data(beside)] if beside else []))
    return grid_of(drawn, dims, title)
