"""grader.report.layout_picture: every failed placement or layout check draws the task's layout
beside the submission's, in every format, from real gradings of wrong submissions on meshes of
1, 2, 4 and 8 devices; the picture never disagrees with the words beside it (the devices, mesh
and spec a message names, the blocks a device holds); shapes that do not fit a grid (three or
more dimensions, more than 16 devices, scalars, empty arrays) are still drawn or described.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import html5lib
import pytest
from rich.cells import cell_len

from grader.array_layout import ArrayLayout
from grader.authoring.exercise import find_exercise
from grader.engine import grade
from grader.observe.layouts import layout_of
from grader.report.layout_picture import WIDTH, drawn_dims, grid_of, grid_text, pair_text
from grader.report.render import deliver, render
from grader.report.result import CheckResult, Report

from browser import AXE, CHROMIUM, NO_AXE, NO_CHROMIUM, audit, notebook_page

REPO = Path(__file__).resolve().parent.parent
# A wrong submission per mesh size (the devices its own mesh holds), and what the task asks instead.
WRONG = {1: "named_sharding_replicated/structure_last_device",   # cpu:7 alone, not cpu:0
         2: "sharding_constraint/structure_small_mesh",          # 2 devices, not 8
         4: "shard_rows/structure_half_mesh",                    # 4 devices, not 8
         8: "mesh_2d/structure_mesh_4x2",                        # a 4 x 2 grid, not 2 x 4
         0: "named_sharding_replicated/structure_single_device"}  # one device, no mesh at all
NAMES = tuple(f"cpu:{i}" for i in range(8))


@pytest.fixture(scope="module")
def graded() -> dict[int, Report]:
    found = {}
    for size, variant in WRONG.items():
        slug, name = variant.split("/")
        found[size] = grade(find_exercise(slug), REPO / "exercises" / slug / "wrong" / f"{name}.py")
    return found


def _drawn(report: Report) -> list[CheckResult]:
    return [c for c in report.checks if c.expected_layout is not None]


def test_wrong_layouts_are_carried_as_data_on_every_mesh_size(graded):
    for size, report in graded.items():
        drawn = _drawn(report)
        assert drawn and all(c.status == "failed" and c.category == "structure" for c in drawn), WRONG[size]
        assert all(c.observed_layout is not None for c in drawn)
        devices = {d for c in drawn for b in c.observed_layout.blocks for d in b.devices}
        assert len(devices) == max(size, 1), (WRONG[size], devices)
    for c in (c for r in graded.values() for c in r.checks if c.status == "passed"):
        assert c.expected_layout is None and c.observed_layout is None  # only a failed comparison draws


def test_json_holds_the_blocks_for_anything_else_to_draw(graded):
    data = json.loads(render(graded[4], "json"))
    for check in data["checks"]:
        mine = next(c for c in graded[4].checks if c.id == check["id"])
        for key in ("expected_layout", "observed_layout"):
            layout = getattr(mine, key)
            assert check[key] == (layout.to_dict() if layout else None)
    mesh = next(c for c in data["checks"] if c["id"] == "structure.mesh")
    assert mesh["observed_layout"]["mesh_shape"] == [4] and mesh["expected_layout"]["mesh_shape"] == [8]
    assert mesh["observed_layout"]["blocks"][0] == {"index": [[0, 4], [0, 8]], "devices": [0]}
    assert ArrayLayout.from_data(mesh["observed_layout"]) == next(
        c for c in graded[4].checks if c.id == "structure.mesh").observed_layout


def _text_grids(text: str) -> list[dict[tuple[str, str], str]]:
    """Every box-drawn grid in ``text`` (side by side or not), left to right and top to bottom:
    {(row range, column range): cell}."""
    lines = text.splitlines()
    corners = sorted((top, match.start(), match.end()) for top, line in enumerate(lines)
                     for match in re.finditer(r"┌[─┬]*┐", line))
    grids = []
    for top, left, right in sorted(corners, key=lambda c: (c[1] > 0, c[0], c[1])):
        table = []
        for line in lines[top + 1:]:
            part = line[left:right]
            if part.startswith("└"):
                break
            if part.startswith("│"):
                table.append([cell.strip() for cell in part.strip("│").split("│")])
        header, body = table[0], table[1:]
        if header[0] == "":  # a matrix: the first column holds the row ranges
            grids.append({(row[0], column): cell for row in body for column, cell in zip(header[1:], row[1:])})
        else:  # a vector: one row of cells under the column ranges
            grids.append({("", column): cell for row in body for column, cell in zip(header, row)})
    return grids


def _expand(cell: str) -> set[str]:
    """``cpu:0,1,2`` and ``cpu:0-3`` as the device names they stand for."""
    prefix, _, numbers = cell.rpartition(":")
    found = set()
    for part in numbers.split(","):
        low, _, high = part.partition("-")
        found.update(f"{prefix}:{n}" for n in range(int(low), int(high or low) + 1))
    return found


def _blocks_by_cell(layout: ArrayLayout) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for block in layout.blocks:
        ranges = [f"{a}:{b}" for a, b in block.index]
        key = (ranges[0], ranges[1]) if len(ranges) == 2 else ("", ranges[0])
        found.setdefault(key, set()).update(layout.name(d) for d in block.devices)
    return found


def test_text_draws_both_layouts_side_by_side_cell_for_cell(graded):
    """The text report's grids hold exactly the blocks of the check's two layouts, every line
    within a terminal's width."""
    for size, report in graded.items():
        text = render(report, "text")
        assert all(cell_len(line) <= WIDTH for line in text.splitlines() if "│" in line or "┌" in line)
        for check in _drawn(report):
            picture = pair_text(check.expected_layout, check.observed_layout)
            assert "\n".join("      " + line if line else line for line in
                             pair_text(check.expected_layout, check.observed_layout, width=74).splitlines()) in text
            first = picture.splitlines()[0]
            assert "What the task asks:" in first and "What your code did:" in picture
            grids = _text_grids(picture)
            assert len(grids) == 2, (WRONG[size], check.id, picture)
            for grid, layout in zip(grids, (check.expected_layout, check.observed_layout)):
                assert {k: _expand(v) for k, v in grid.items()} == _blocks_by_cell(layout), (WRONG[size], check.id)


def test_text_degrades_to_ascii_where_the_output_is_not_utf8(graded):
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="replace")
    deliver(graded[8], "text", stream)
    stream.flush()
    text = stream.buffer.getvalue().decode("ascii")
    assert "What the task asks:" in text and "+-----" in text and "| 0:2 | cpu:0 | cpu:1 |" in text
    grid_lines = [line for line in text.splitlines() if line.strip().startswith(("|", "+"))]
    assert grid_lines and not any("?" in line for line in grid_lines)  # nothing the encoding had to replace
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    deliver(graded[8], "text", utf8)
    utf8.flush()
    assert "┌" in utf8.buffer.getvalue().decode("utf-8")


def test_markdown_fences_the_same_grids(graded):
    for report in graded.values():
        md = render(report, "md")
        for check in _drawn(report):
            assert f"```text\n{pair_text(check.expected_layout, check.observed_layout)}\n```" in md


def _tables(html: str) -> list[tuple[str, str, dict[tuple[str, str], str]]]:
    """Every layout table: its figure's aria-label, its caption, {(row range, column range): cell}."""
    tree = html5lib.parse(html, namespaceHTMLElements=False)
    found = []
    for figure in tree.iter("figure"):
        table = figure.find("table")
        columns = [th.text for th in table.find("thead").iter("th")]
        cells = {}
        for row in table.find("tbody").iter("tr"):
            header = row.find("th")
            for column, cell in zip(columns, row.findall("td")):
                cells[(header.text if header is not None else "", column)] = cell.text
        found.append((figure.get("aria-label"), "".join(table.find("caption").itertext()), cells))
    return found


def test_html_and_the_notebook_cell_draw_tables_that_say_it_in_words(graded):
    for size, report in graded.items():
        for html in (render(report, "html"), report._repr_html_()):
            tables = _tables(html)
            drawn = _drawn(report)
            assert len(tables) == 2 * len(drawn), WRONG[size]
            layouts = [layout for c in drawn for layout in (c.expected_layout, c.observed_layout)]
            for (label, caption, cells), layout in zip(tables, layouts):
                assert {k: _expand(v) for k, v in cells.items()} == _blocks_by_cell(layout)
                assert caption.startswith(("What the task asks:", "What your code did:"))
                # the words say every cell the table shows
                for (row, column), devices in cells.items():
                    assert f"[{row + ', ' if row else ''}{column}] on {devices}" in label
                assert f"shape {layout.shape}" in label


def _listed(words: str) -> list[str]:
    """The devices a sharding's words list: ``mesh over [cpu:0, cpu:1]``, ``NamedSharding(... [..])``."""
    inside = re.search(r"over \[([^\]]*)\]", words)
    return [d.strip() for d in inside.group(1).split(",")] if inside else []


def test_the_picture_never_disagrees_with_the_words_beside_it(graded):
    """What a check's message and observed line say of the submission's layout (its devices, its
    mesh's shape and axes, its spec, which block a device holds) is what its picture shows; and
    the same of the task's layout and the expected line."""
    compared = 0
    for size, report in graded.items():
        for check in _drawn(report):
            seen, want = check.observed_layout, check.expected_layout
            held = {(seen.name(d), tuple(b.index)) for b in seen.blocks for d in b.devices}
            asked = {(want.name(d), tuple(b.index)) for b in want.blocks for d in b.devices}
            words = f"{check.message} {check.observed}"
            if _listed(check.observed or ""):  # "NamedSharding(mesh over [cpu:0, ...] with axes ..., ...)"
                assert set(_listed(check.observed)) == {name for name, _ in held}
                compared += 1
            shape = re.search(r"a mesh of shape (\([\d, ]*\)) over (\d+) devices?.* with axes (\([^)]*\))", words)
            if shape:
                assert str(seen.mesh_shape) == shape.group(1) and str(seen.axis_names) == shape.group(3)
                assert len({name for name, _ in held}) == int(shape.group(2))
                compared += 1
            for spec in re.findall(r"placed with (PartitionSpec\([^)]*\))", check.message):
                assert spec == f"PartitionSpec({', '.join(repr(e) for e in seen.spec)})"
                compared += 1
            for device, got, should in re.findall(r"(cpu:\d+) holds \[([^\]]*)\], should hold \[([^\]]*)\]", words):
                ranges = lambda text: tuple(tuple(map(int, r.split(":"))) for r in text.split(", "))  # noqa: E731
                assert (device, ranges(got)) in held and (device, ranges(should)) in asked
                compared += 1
            if check.expected and check.expected.startswith("Mesh("):  # the mesh the task asks for, as code
                axes = re.search(r"\), (\([^)]*\))\)$", check.expected).group(1)
                assert str(want.axis_names) == axes
                compared += 1
            # the picture's headings say the same mesh and spec as the data they are drawn from
            picture = pair_text(want, seen)
            for layout in (want, seen):
                if layout.mesh_shape:
                    sizes = ", ".join(f"{a!r}: {n}" for a, n in zip(layout.axis_names, layout.mesh_shape))
                    assert f"Mesh({sizes})" in picture
                    assert f"P({', '.join(repr(e) for e in layout.spec)})" in picture
    assert compared >= 8  # the words were really read, not skipped over


def test_a_placement_on_one_device_outside_any_mesh_is_drawn_so(graded):
    placed = next(c for c in graded[0].checks if c.id == "structure.placed")
    assert placed.observed_layout.mesh_shape == () and placed.observed_layout.blocks[0].devices == (0,)
    picture = pair_text(placed.expected_layout, placed.observed_layout)
    assert "one device, no mesh" in picture and _text_grids(picture)[1] == {("", "0:7"): "cpu:0"}


# --- shapes that do not fit a grid (#67, point 2) ---------------------------------------------------------


def _named(ids: list[int], mesh_shape: list[int], axes: list[str], spec: list) -> dict:
    return {"type": "NamedSharding", "mesh_devices": ids, "mesh_shape": mesh_shape, "axis_names": axes, "spec": spec}


def test_an_array_of_three_dimensions_draws_the_two_that_are_split():
    split = layout_of(_named(list(range(8)), [2, 4], ["data", "model"], ["data", None, "model"]), (4, 6, 8), NAMES)
    assert drawn_dims([split]) == (0, 2)
    grid = grid_of(split, (0, 2))
    assert grid.rows == ("0:2", "2:4") and grid.columns == ("0:2", "2:4", "4:6", "6:8")
    assert grid.cells[1] == ("cpu:4", "cpu:5", "cpu:6", "cpu:7")
    assert "rows: dimension 0, columns: dimension 2 of 3" in grid_text(grid)
    # what the task asks for is drawn too: a dimension only the other layout splits
    whole = layout_of(_named(list(range(8)), [8], ["data"], []), (4, 6, 8), NAMES)
    asked = layout_of(_named(list(range(8)), [8], ["data"], [None, "data"]), (4, 6, 8), NAMES)
    assert drawn_dims([asked, whole]) == (1, 2)
    assert drawn_dims([whole]) == (1, 2)  # nothing split: the last two
    assert "columns: dimension 2 of 3" in pair_text(asked, whole)
    # three dimensions split between the two: the task's two are drawn
    other = layout_of(_named(list(range(8)), [8], ["data"], [None, "data"]), (4, 8, 8), NAMES)
    task = layout_of(_named(list(range(8)), [2, 4], ["data", "model"], ["data", None, "model"]), (4, 8, 8), NAMES)
    assert drawn_dims([task, other]) == (0, 2)


def test_more_than_sixteen_devices_are_named_as_ranges_and_blocks_grouped():
    names = tuple(f"tpu:{i}" for i in range(32))
    split = layout_of(_named(list(range(32)), [32], ["data"], ["data"]), (64,), names)
    grid = grid_of(split, (0,))
    assert len(grid.columns) == 8 and grid.columns[0] == "0:8" and grid.columns[-1] == "56:64"
    assert grid.cells == (tuple(f"tpu:{4 * i}-{4 * i + 3}" for i in range(8)),)
    replicated = layout_of(_named(list(range(32)), [4, 8], ["data", "model"], []), (64,), names)
    text = pair_text(split, replicated)
    assert "tpu:0-31" in text and all(cell_len(line) <= WIDTH for line in text.splitlines())
    assert "…" not in text and "tpu:4-7" in text  # a cell too narrow for its names wraps them, never cuts them
    assert grid_of(layout_of(_named(list(range(8)), [8], ["data"], []), (5,), NAMES), (0,)).cells == (
        ("cpu:0,1,2,3,4,5,6,7",),)  # sixteen or fewer: each device named


def test_scalars_and_empty_arrays_get_one_line():
    scalar = layout_of(_named(list(range(4)), [4], ["data"], []), (), NAMES)
    assert pair_text(scalar, None) == "What the task asks: a scalar, held whole by cpu:0,1,2,3 (Mesh('data': 4), P())"
    empty = layout_of(_named(list(range(2)), [2], ["data"], ["data"]), (0, 3), NAMES)
    line = grid_text(grid_of(empty, (0, 1)))
    assert line.startswith("an empty array of shape (0, 3), held whole by cpu:0,1") and "\n" not in line


def test_a_layout_that_is_not_one_is_refused():
    good = layout_of(_named([0, 1], [2], ["data"], ["data"]), (4,), NAMES).to_dict()
    assert ArrayLayout.from_data(json.loads(json.dumps(good))).to_dict() == good
    for broken in ({**good, "shape": [-1]}, {**good, "blocks": [{"index": [[0, 2]]}]}, {**good, "spec": [3]},
                   {k: v for k, v in good.items() if k != "device_names"}, [good]):
        with pytest.raises(ValueError):
            ArrayLayout.from_data(broken)


def test_a_check_that_judges_no_layout_draws_none():
    """The result computed from the original x, not the placed one: where x lives is right, so
    nothing is drawn beside that failure."""
    path = REPO / "exercises" / "named_sharding_replicated" / "wrong" / "structure_sums_original.py"
    report = grade(find_exercise("named_sharding_replicated"), path)
    failed = [c for c in report.checks if c.status == "failed"]
    assert [c.id for c in failed] == ["structure.sum_of_placed"]
    assert failed[0].expected_layout is None and failed[0].observed_layout is None
    assert "What the task asks" not in render(report, "text") and "<figure" not in render(report, "html")


def test_jaxgrade_check_draws_ascii_on_a_terminal_that_is_not_utf8(tmp_path):
    path = REPO / "exercises" / "mesh_2d" / "wrong" / "structure_mesh_4x2.py"
    env = {**os.environ, "PYTHONIOENCODING": "ascii:backslashreplace", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(path), "-e", "mesh_2d"], capture_output=True,
                          env=env, timeout=600, cwd=tmp_path)
    text = done.stdout.decode("ascii")
    assert "What the task asks:" in text and "| 0:2 | cpu:0 | cpu:1 |" in text and "\\u250c" not in text, text


def test_names_a_student_chose_stay_text_in_every_picture(graded):
    """Axis names come from the student's code: they are drawn as text, never as markup."""
    hostile = "<b>x</b>`|*"
    layout = layout_of(_named([0, 1], [2], [hostile], [hostile]), (4,), NAMES)
    report = dataclasses.replace(graded[2], checks=tuple(
        dataclasses.replace(c, expected_layout=layout, observed_layout=layout) if c.expected_layout else c
        for c in graded[2].checks))
    html = render(report, "html")
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    md = render(report, "md")
    fence = re.search(r"^(`{3,})text$", md, re.M).group(1)
    block = md.split(fence + "text\n", 1)[1].split("\n" + fence, 1)[0]
    assert hostile in block and fence not in block  # the fence is longer than any backtick run in it
    assert all(cell_len(line) <= WIDTH for line in pair_text(layout, layout).splitlines())


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
@pytest.mark.skipif(not AXE.is_file(), reason=NO_AXE)
@pytest.mark.parametrize("width", [390, 1280])
def test_the_drawn_reports_pass_axe_and_fit_the_screen(graded, tmp_path, width):
    """Every drawn report, as a page and as a notebook cell on a light and a dark notebook: zero
    axe-core violations, and a grid wider than a phone scrolls inside its own box."""
    for size, report in graded.items():
        pages = {"page": render(report, "html"),
                 "light notebook": notebook_page(report._repr_html_(), "#ffffff", "#000000"),
                 "dark notebook": notebook_page(report._repr_html_(), "#111111", "#eeeeee")}
        for name, page in pages.items():
            found = audit(page, width, tmp_path)
            assert found["violations"] == [], f"{WRONG[size]}, {name}: {found['violations']}"
            assert found["scroll_width"] <= found["client_width"] == width, f"{WRONG[size]}, {name}: {found}"
