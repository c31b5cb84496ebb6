"""A plain (non-editable) install carries the exercises (what students see of them: no answer
key, docs/keys.md) and templates with the package, a wheel
and an editable install build without a warning, and the grader grades from wherever it is
installed: a wheel in a venv, in a user site-packages, in a ``--target`` folder on PYTHONPATH,
in a conda-like prefix (a whole CPython of its own, no venv), each with JAX and the rest in the
same folder, where a child must find them."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import REPO, SEED_EXERCISE, base_python_without_jax, dependencies_into

pytestmark = pytest.mark.slow  # a real pip build, then a real grading with the installed copy


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``pip install .`` into a folder of its own, with pip's and the build's output kept."""
    target = tmp_path_factory.mktemp("install") / "site"
    # The test machine sets PYTHONDONTWRITEBYTECODE, which makes setuptools say it skips
    # byte-compiling: a note about this machine, not about the package.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--verbose", "--no-deps",
                            "--no-compile", "--target", str(target), str(REPO)],
                           capture_output=True, text=True, timeout=300, cwd=target.parent, env=env)
    assert build.returncode == 0, build.stderr[-2000:]
    return target, build.stdout + build.stderr


# pip's own lines about this machine's pip configuration (an index location that is not there)
MACHINE = re.compile(r"WARNING: Location '.*' is ignored")
VISUALIZES = REPO / "tests" / "data" / "visualizes_its_layout.py"


def _warnings(log: str) -> list[str]:
    return [line for line in log.splitlines()
            if re.search(r"warn|deprecat", line, re.IGNORECASE) and not MACHINE.search(line)]


def _quiet_env() -> dict[str, str]:
    # The test machine sets PYTHONDONTWRITEBYTECODE, which makes setuptools say it skips
    # byte-compiling: a note about this machine, not about the package.
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """``pip wheel --no-deps .``: the wheel, and pip's and the build backend's output."""
    folder = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "-w", str(folder),
                            str(REPO)], capture_output=True, text=True, timeout=300, cwd=folder, env=_quiet_env())
    assert build.returncode == 0, build.stderr[-2000:]
    return next(folder.glob("jaxgrade-*.whl")), build.stdout + build.stderr


def test_wheel_and_editable_builds_print_no_warning(wheel, tmp_path):
    """``pip wheel .`` and ``pip install -e .`` (into a venv of their own), the backend's output
    included: no warning, setuptools' note on editable installs ("Please be careful with folders
    in your working directory...") included."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    editable = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                               "--verbose", "--no-deps", "-e", str(REPO)],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path, env=_quiet_env())
    assert editable.returncode == 0, editable.stderr[-2000:]
    for log in (wheel[1], editable.stdout + editable.stderr):
        assert "Successfully" in log
        assert not _warnings(log), "\n".join(_warnings(log)[:20])


def _wheel_installed(kind: str, wheel: Path, root: Path) -> tuple[list[str], dict[str, str]]:
    """The wheel installed with pip as ``kind`` says, beside its dependencies; the command that
    runs its grader there and that command's environment."""
    python = base_python_without_jax()
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "JAXGRADE_NO_DAEMON": "1",
           "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    pip = [sys.executable, "-m", "pip"]
    if kind == "venv":
        subprocess.run([python, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
        dependencies_into(root / "lib" / version / "site-packages")
        pip += ["--python", str(root / "bin" / "python"), "install"]
        command = [str(root / "bin" / "jaxgrade")]
    elif kind == "user":
        env["PYTHONUSERBASE"] = str(root)
        dependencies_into(root / "lib" / version / "site-packages")
        pip += ["--python", python, "install", "--user"]
        command = [str(root / "bin" / "jaxgrade")]
    else:
        dependencies_into(root)
        env["PYTHONPATH"] = str(root)
        pip += ["install", "--target", str(root)]
        command = [python, "-m", "grader"]
    done = subprocess.run([*pip, "--no-deps", "--no-index", "--no-compile", str(wheel)], capture_output=True,
                          text=True, timeout=300, env={**_quiet_env(), **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return command, env


@pytest.mark.parametrize("kind", ["venv", "user", "target"])
def test_a_wheel_grades_a_lazy_import_with_full_marks_however_installed(wheel, kind, tmp_path):
    """The grader of a wheel installed into a venv, with ``--user`` or with ``--target`` and
    PYTHONPATH, by an interpreter that has no JAX of its own, in a folder that is not the
    checkout: a right solution that imports rich lazily (jax.debug.visualize_array_sharding)
    gets full marks. Its child finds rich where the grader found it: in the folder that holds
    the grader itself (a venv's site-packages, dropped with the grader's folder before #44), or
    one that ``python -I`` alone leaves out (the user site-packages, PYTHONPATH)."""
    command, env = _wheel_installed(kind, wheel[0], tmp_path / "install")
    (tmp_path / "student").mkdir()
    shutil.copy(VISUALIZES, tmp_path / "student" / "solution.py")
    done = subprocess.run([*command, "check", "solution.py", "-e", "named_sharding_replicated"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path / "student", env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Score: 10/10" in done.stdout and "CPU 0" in done.stdout  # rich drew the layout


def _keys_of_the_track() -> dict[str, str]:
    """SHA-256 → name of every answer key of the track (docs/keys.md): each exercise's reference
    and its right/ and wrong/ variants."""
    from grader.authoring.exercise import KEY_PARTS
    found = [p for exercise in (REPO / "exercises").iterdir() for part in KEY_PARTS
             for p in [exercise / part, *(exercise / part).glob("*")] if p.is_file()]
    return {hashlib.sha256(p.read_bytes()).hexdigest(): str(p.relative_to(REPO)) for p in found}


def _files_under(top: Path) -> list[Path]:
    """Every regular file under ``top``, symlinks not followed (the venv's links to this test
    run's dependencies are not what the wheel installed)."""
    return [Path(folder) / name for folder, _, names in os.walk(top) for name in names
            if (Path(folder) / name).is_file() and not (Path(folder) / name).is_symlink()]


def test_a_students_install_and_pack_hold_no_key_and_grade_the_visible_checks(wheel, tmp_path):
    """A student's environment: the wheel pip-installed into a venv of its own (its dependencies
    linked in, as everywhere here: this machine installs nothing from an index), and the student
    pack that install exports. Every file the wheel installed (its RECORD) and every file of the
    venv and the pack: none is, by content or by name, a reference or a variant of any exercise
    of the track. There, ``jaxgrade check`` of a right variant (a file and a notebook) and the
    pack's check script give full marks, and validate and the Gradescope export say where the
    keys are instead of crashing."""
    import nbformat
    import tomllib

    venv = tmp_path / "venv"
    command, env = _wheel_installed("venv", wheel[0], venv)
    pack = tmp_path / "pack"
    made = subprocess.run([*command, "export", "student", "-e", SEED_EXERCISE.name, "-o", str(pack)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    record = next(venv.glob("lib/python*/site-packages/jaxgrade-*.dist-info/RECORD"))
    recorded = [record.parent.parent / line.split(",")[0] for line in record.read_text().splitlines()]
    assert len(recorded) > 200 and any(p.name == "checks.py" for p in recorded)
    files = sorted({*recorded, *_files_under(venv), *_files_under(pack)})
    keys = _keys_of_the_track()
    sizes = {(REPO / name).stat().st_size for name in keys.values()}
    copies = [f"{p} (a copy of {keys[digest]})" for p in files if p.is_file() and p.stat().st_size in sizes
              and (digest := hashlib.sha256(p.read_bytes()).hexdigest()) in keys]
    named = [str(p) for p in files if p.name == "reference.py" or p.parent.name in ("right", "wrong")]
    assert not copies and not named, copies + named

    right = (SEED_EXERCISE / "right" / "jitted.py").read_text()
    work = tmp_path / "work"
    work.mkdir()
    (work / "solution.py").write_text(right)
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(right)])
    nbformat.write(book, work / "solution.ipynb")
    for name in ("solution.py", "solution.ipynb"):
        done = subprocess.run([*command, "check", name, "-e", SEED_EXERCISE.name], capture_output=True, text=True,
                              timeout=300, cwd=work, env=env)
        assert done.returncode == 0 and "Score: 10/10" in done.stdout, name + done.stdout[-3000:] + done.stderr[-2000:]
    (pack / f"{SEED_EXERCISE.name}.py").write_text(right)
    done = subprocess.run([str(venv / "bin" / "python"), "check"], capture_output=True, text=True, timeout=300,
                          cwd=pack, env=env)
    assert done.returncode == 0 and "Score: 10/10" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    # the README's other way, with the pytest the install line puts beside jaxgrade: one test per check
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, timeout=300, cwd=pack, env=env)
    checks = len(tomllib.loads((SEED_EXERCISE / "exercise.toml").read_text())["points"])
    assert done.returncode == 0 and f"{checks} passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    for args in (["validate", SEED_EXERCISE.name], ["export", "gradescope", "-e", SEED_EXERCISE.name, "-o", "a.zip"]):
        done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=300, cwd=work, env=env)
        assert done.returncode == 2 and "jaxgrade's source repository" in done.stderr, done.stderr[-2000:]
        assert "Traceback" not in done.stderr and not (work / "a.zip").exists()


def _listed(shown: str) -> list[str]:
    """The slugs ``jaxgrade list`` shows: its table's rows, up to the note on absent keys."""
    rows = shown.split("\n\n")[0].splitlines()[1:]
    return [row.split()[0] for row in rows]


def test_a_course_with_a_pip_installed_jaxgrade(wheel, tmp_path):
    """An instructor's course beside a jaxgrade installed from the wheel, no checkout
    (docs/course.md): ``new`` outside any course refuses to write into the installed package;
    ``init`` makes the course; inside it ``new`` writes there, ``list`` shows the course's
    exercises with the track's, an exercise of the course's own (with its key) gets full marks
    for its reference from a folder below the course, and exports a student pack and a Gradescope
    autograder, whose bundled source (its pyproject.toml written from the installed metadata)
    builds, and whose run_autograder grades the reference 10/10 with it."""
    command, env = _wheel_installed("venv", wheel[0], tmp_path / "venv")

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)

    refused = run("new", "stray", cwd=tmp_path)
    assert refused.returncode == 2 and "no course here" in refused.stderr, refused.stderr
    assert not list((tmp_path / "venv").glob("lib/python*/site-packages/grader/exercises/stray"))
    assert run("init", "course", cwd=tmp_path).returncode == 0
    course = tmp_path / "course"
    assert run("new", "moe_dispatch", cwd=course).returncode == 0
    own = course / "exercises" / "ring_replicated"  # an exercise the instructor wrote, key included
    shutil.copytree(SEED_EXERCISE, own, ignore=shutil.ignore_patterns("__pycache__"))
    (own / "exercise.toml").write_text((own / "exercise.toml").read_text().replace(
        'slug = "named_sharding_replicated"', 'slug = "ring_replicated"'))
    (course / "work").mkdir()
    listed = run("list", cwd=course / "work")
    slugs = _listed(listed.stdout)
    assert slugs[:2] == ["moe_dispatch", "ring_replicated"] and "named_sharding_replicated" in slugs, listed.stdout
    shutil.copy(own / "reference.py", course / "work" / "solution.py")
    done = run("check", "solution.py", "-e", "ring_replicated", cwd=course / "work")
    assert done.returncode == 0 and "Score: 10/10" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert run("export", "student", "-e", "ring_replicated", "-o", "pack", cwd=course).returncode == 0
    assert (course / "pack" / ".jaxgrade" / "exercises" / "ring_replicated" / "checks.py").is_file()
    done = run("export", "gradescope", "-e", "ring_replicated", "-o", "a.zip", cwd=course)
    assert done.returncode == 0, done.stderr[-2000:]
    root = tmp_path / "autograder"
    with zipfile.ZipFile(course / "a.zip") as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():  # extractall drops the mode bits
            os.chmod(root / "source" / info.filename, stat.S_IMODE(info.external_attr >> 16) or 0o644)
    source = root / "source" / "jaxgrade"
    built = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
                            "--build-lib", str(tmp_path / "lib")], cwd=source, capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    files = {str(p.relative_to(tmp_path / "lib")) for p in (tmp_path / "lib").rglob("*") if p.is_file()}
    assert {"grader/cli.py", "grader/authoring/export/command.py", "grader/templates/report.txt.j2"} <= files
    assert [f for f in files if f.startswith("grader/exercises/")] == ["grader/exercises/README.txt"]
    if os.geteuid() != 0:
        pytest.skip("run_autograder grades as root only (Gradescope runs it as root)")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    shutil.copy(own / "reference.py", root / "submission" / "ring_replicated.py")
    graded = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True, timeout=300, cwd=root,
                            env={**env, "JAXGRADE_AUTOGRADER_ROOT": str(root),
                                 "JAXGRADE_PYTHON": str(tmp_path / "venv" / "bin" / "python")})
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 10


def test_the_worked_course_with_a_pip_installed_jaxgrade(wheel, tmp_path):
    """examples/course (docs/course.md) as its CI runs it, beside a jaxgrade installed from the
    wheel and no checkout: inside it ``list`` shows its two exercises then the pinned track
    one; ``validate`` proves both, their checks importing the course's helpers; a student's
    ``check`` of row_max's reference gets full marks; the Gradescope export carries the helpers
    beside the exercise; and a pin the installed track does not match is exit 2, said."""
    command, env = _wheel_installed("venv", wheel[0], tmp_path / "venv")
    course = tmp_path / "course"
    shutil.copytree(REPO / "examples" / "course", course, ignore=shutil.ignore_patterns("__pycache__"))

    def run(*args: str, cwd: Path = course) -> subprocess.CompletedProcess:
        return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)

    listed = run("list", cwd=course / "exercises")
    assert _listed(listed.stdout) == ["row_max", "shard_rows", "named_sharding_replicated"], \
        listed.stdout + listed.stderr
    done = run("validate", "--seeds", "1")
    assert done.returncode == 0 and "2/2 exercise(s) valid" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    shutil.copy(course / "exercises" / "row_max" / "reference.py", course / "solution.py")
    done = run("check", "solution.py")
    assert done.returncode == 0 and "Score: 11/11" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert run("export", "gradescope", "-e", "row_max", "-o", "a.zip").returncode == 0
    names = zipfile.ZipFile(course / "a.zip").namelist()
    assert any(n.endswith("exercises/row_max/_helpers/course_helpers/__init__.py") for n in names), names
    toml = course / "jaxgrade.toml"
    toml.write_text(toml.read_text().replace('named_sharding_replicated = "3"', 'named_sharding_replicated = "2"'))
    refused = run("validate", "--seeds", "1")
    assert refused.returncode == 2 and "pinned to version 2, the installed track has version 3" in refused.stderr


def test_the_tracks_keys_beside_a_course_with_a_pip_installed_jaxgrade(wheel, tmp_path):
    """docs/keys.md end to end: examples/course beside a jaxgrade installed from the wheel (its
    track has no keys). ``export gradescope --all`` exports the course's own exercises, each
    proven through its run_autograder, and names the pinned track exercise it skipped; with
    ``keys`` naming a checkout's exercises, ``list`` still shows the course's own exercises
    first, the pin still holds, and ``--all`` exports all three, the helpers carried."""
    command, env = _wheel_installed("venv", wheel[0], tmp_path / "venv")
    course = tmp_path / "course"
    shutil.copytree(REPO / "examples" / "course", course, ignore=shutil.ignore_patterns("__pycache__"))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*command, *args], capture_output=True, text=True, timeout=600, cwd=course, env=env)

    done = run("export", "gradescope", "--all", "-o", "without")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Skipped 1 exercise(s) without an answer key here" in done.stdout and "keys = " in done.stdout
    assert sorted(p.name for p in (course / "without").iterdir()) == ["row_max.zip", "shard_rows.zip"]
    assert done.stdout.count("Proven through it: the reference: full marks") == 2, done.stdout
    toml = course / "jaxgrade.toml"
    toml.write_text(toml.read_text() + f'keys = "{REPO / "exercises"}"\n')
    listed = run("list")
    assert _listed(listed.stdout) == ["row_max", "shard_rows", "named_sharding_replicated"], \
        listed.stdout + listed.stderr
    done = run("export", "gradescope", "--all", "-o", "with")
    assert done.returncode == 0 and "Skipped" not in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in (course / "with").iterdir()) == \
        ["named_sharding_replicated.zip", "row_max.zip", "shard_rows.zip"]
    names = zipfile.ZipFile(course / "with" / "row_max.zip").namelist()
    assert "exercises/row_max/_helpers/course_helpers/__init__.py" in names, names


def test_a_wheel_grades_a_notebook_as_the_checkout_does(wheel, tmp_path):
    """A notebook that imports grader with its other imports and calls ``grader.check()`` in a
    cell of its own: from a wheel in a venv the report says what the checkout's says (both cells
    left out), rather than running that cell in the child (which found the grader in the wheel's
    site-packages, imported its report stack on every check and skipped the cell when it failed)."""
    import nbformat
    command, env = _wheel_installed("venv", wheel[0], tmp_path / "install")
    reference = (SEED_EXERCISE / "reference.py").read_text()
    cells = ["import grader\n" + reference, "grader.check('named_sharding_replicated')"]
    (tmp_path / "student").mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]),
                   tmp_path / "student" / "solution.ipynb")
    notes = []
    for run, run_env in ((command, env), ([sys.executable, "-m", "grader"], {**os.environ, "JAXGRADE_NO_DAEMON": "1"})):
        done = subprocess.run([*run, "check", "solution.ipynb", "-e", "named_sharding_replicated"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path / "student", env=run_env)
        assert done.returncode == 0 and "Score: 10/10" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
        notes.append([line.strip() for line in done.stdout.splitlines() if "note:" in line])
    assert notes[0] == notes[1] and "cell 2 skipped: uses grader, which needs grader" in notes[0][0], notes


def _linked_tree(source: Path, destination: Path, skip: tuple[str, ...] = ()) -> None:
    """``source`` copied to ``destination`` as hard links (real files of the copy's own, no data
    written twice), its symlinks kept as symlinks; a copy where the two are on other devices."""
    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    shutil.copytree(source, destination, symlinks=True, copy_function=link, ignore=shutil.ignore_patterns(*skip))


def _conda_like_prefix(wheel: Path, prefix: Path) -> tuple[list[str], dict[str, str], Path]:
    """What ``conda create -p PREFIX python=3.11`` then ``pip install`` make, as far as the grader
    can tell: a relocated CPython of its own at ``prefix`` (the interpreter this venv was made
    from, its standard library and shared library beside it; no pyvenv.cfg, so ``sys.prefix`` is
    ``sys.base_prefix``; no EXTERNALLY-MANAGED marker, as conda's Python has none), a
    ``conda-meta`` folder, JAX and the rest as real files (hard links of this venv's) in the
    prefix's own site-packages (where that interpreter installs: lib/python3.11/site-packages,
    or a Debian build's local/lib/python3.11/dist-packages), the wheel installed there by pip
    (its ``jaxgrade`` in bin/, or a Debian build's local/bin/), and the environment ``conda
    activate`` sets (CONDA_PREFIX, the prefix's bin first on PATH). Returns the grading command,
    its environment and the site-packages folder. Not emulated: conda's
    own builds of CPython and of the packages (here PyPI's wheels), and conda's rewriting of the
    interpreter's RUNPATH (this copy may still load the original's libpython)."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = base_python_without_jax()  # base's interpreter, and it holds no JAX of its own
    (prefix / "bin").mkdir(parents=True)
    shutil.copy2(base / "bin" / version, prefix / "bin" / version, follow_symlinks=False)
    for name in (f"python{sys.version_info.major}", "python"):  # conda's names, which a Debian base lacks
        (prefix / "bin" / name).symlink_to(version)
    assert Path(python).resolve() == (base / "bin" / version).resolve()
    (prefix / "lib").mkdir()
    for library in base.joinpath("lib").glob("libpython*.so*"):
        shutil.copy2(library, prefix / "lib" / library.name, follow_symlinks=False)
    # the standard library; the base's site-packages (this machine's own packages) stays behind,
    # as a new conda environment starts with an empty one
    _linked_tree(base / "lib" / version, prefix / "lib" / version,
                 skip=("site-packages", "dist-packages", "test", "*.a", "EXTERNALLY-MANAGED"))
    env = {"PATH": f"{prefix / 'bin'}:/usr/bin:/bin", "CONDA_PREFIX": str(prefix), "CONDA_DEFAULT_ENV": str(prefix),
           "CONDA_SHLVL": "1", "NO_COLOR": "1", "JAXGRADE_NO_DAEMON": "1",
           "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}
    paths = "import sysconfig; print(sysconfig.get_path('purelib')); print(sysconfig.get_path('scripts'))"
    asked = subprocess.run([str(prefix / "bin" / version), "-c", paths],
                           capture_output=True, text=True, timeout=60, env=env)
    assert asked.returncode == 0, asked.stderr[-2000:]
    site, scripts = map(Path, asked.stdout.splitlines())
    assert site.is_relative_to(prefix) and scripts.is_relative_to(prefix), asked.stdout
    site.mkdir(parents=True)
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name.startswith(("__editable__", "jaxgrade-", "__pycache__")) or entry.suffix == ".pth":
            continue
        if entry.is_dir():
            _linked_tree(entry, site / entry.name, skip=("__pycache__",))
        else:
            os.link(entry, site / entry.name)
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "history").write_text(f"# cmd: conda create -p {prefix} python={version[6:]}\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(prefix / "bin" / version), "install",
                           "--no-deps", "--no-index", "--no-compile", str(wheel)], capture_output=True, text=True,
                          timeout=300, env={**_quiet_env(), **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return [str(scripts / "jaxgrade")], env, site


def test_a_wheel_in_a_conda_like_prefix_grades_with_full_marks(wheel, tmp_path):
    """The grader of a wheel installed into a conda-like environment (:func:`_conda_like_prefix`),
    run as the ``jaxgrade`` pip installed there, in a folder that is not the checkout: the
    reference solution and a right solution that imports rich lazily
    (jax.debug.visualize_array_sharding) both get full marks. The prefix is checked to be what
    it emulates first: its interpreter takes the prefix as its own (no venv) and imports JAX,
    rich and the grader from the prefix's site-packages."""
    prefix = tmp_path / "conda-env"
    command, env, site = _conda_like_prefix(wheel[0], prefix)
    assert not (prefix / "pyvenv.cfg").exists()
    where = subprocess.run([str(prefix / "bin" / "python"), "-c",
                            "import sys, jax, rich, grader; print(sys.prefix); print(sys.base_prefix); "
                            "print(jax.__file__); print(rich.__file__); print(grader.__file__)"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr[-2000:]
    own, base, *modules = where.stdout.splitlines()
    assert own == base == str(prefix), where.stdout
    assert all(Path(m).is_relative_to(site) and not Path(m).is_symlink() for m in modules), where.stdout
    for name, source in (("reference", SEED_EXERCISE / "reference.py"), ("lazy_import", VISUALIZES)):
        (tmp_path / name).mkdir()
        shutil.copy(source, tmp_path / name / "solution.py")
        done = subprocess.run([*command, "check", "solution.py", "-e", "named_sharding_replicated"],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path / name, env=env)
        assert done.returncode == 0, name + "\n" + done.stdout[-3000:] + done.stderr[-3000:]
        assert "Score: 10/10" in done.stdout, name + "\n" + done.stdout[-3000:]
    assert "CPU 0" in done.stdout  # rich drew the layout


def test_pip_install_prints_no_warning(installed):
    """The build backend's own output included (--verbose): no "Package would be ignored" or
    any other warning, so a real one is not lost among the expected ones."""
    _, output = installed
    warnings = [line for line in output.splitlines() if re.search(r"warn|deprecat", line, re.IGNORECASE)]
    assert not warnings, "\n".join(warnings[:20])


def test_non_editable_install_carries_exercises_without_keys_and_templates(installed, tmp_path):
    target, _ = installed
    package = target / "grader"
    for relative in ("exercises/named_sharding_replicated/exercise.toml",
                     "exercises/named_sharding_replicated/checks.py",
                     "exercises/named_sharding_replicated/starter.py",
                     "exercises/named_sharding_replicated/statement.md",
                     "templates/report.txt.j2", "templates/export/gradescope/run_autograder"):
        assert (package / relative).is_file(), relative
    track = sorted(p.name for p in (REPO / "exercises").iterdir() if (p / "exercise.toml").is_file())
    assert sorted(p.parent.name for p in (package / "exercises").glob("*/exercise.toml")) == track
    assert {p.name for p in (package / "exercises").glob("*/*")} == {"exercise.toml", "checks.py", "starter.py",
                                                                      "statement.md"}
    assert not list(package.rglob("*.pyc")), "bytecode of the checkout must not ship"
    # The installed copy finds its own exercises and templates, not the source tree's.
    probe = ("import grader.authoring.exercise as e, grader.authoring.course as c, grader.report.render as r; "
             "print(*c.exercise_roots()); print(r.templates_root()); "
             "print(e.find_exercise('named_sharding_replicated').title)")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                           cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert shown.returncode == 0, shown.stderr
    root, templates, title = shown.stdout.splitlines()
    assert Path(root) == package / "exercises" and Path(templates) == package / "templates"
    assert title == "NamedSharding (replicated)"


def test_installed_wheel_grades_a_submission_outside_the_checkout(installed, tmp_path):
    """``jaxgrade check`` run from the installed copy, in a folder that is not the checkout:
    the reference solution gets full marks, and a known-wrong variant loses the points of its
    category, so the grading (sandboxed child included) really ran from the install."""
    target, _ = installed
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "JAXGRADE_NO_DAEMON": "1",
           "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}
    scores = {}
    for name, source in (("right", SEED_EXERCISE / "reference.py"),
                         ("wrong", SEED_EXERCISE / "wrong" / "structure_no_placement.py")):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(source, folder / "solution.py")
        done = subprocess.run([sys.executable, "-m", "grader", "check", "solution.py", "-e",
                               "named_sharding_replicated", "--format", "json"],
                              capture_output=True, text=True, timeout=300, cwd=folder, env=env)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        report = json.loads(done.stdout)
        scores[name] = (report["score"], report["max_score"], done.returncode)
    right, wrong = scores["right"], scores["wrong"]
    assert right[0] == right[1] > 0 and right[2] == 0, scores
    assert wrong[0] < wrong[1] and wrong[2] == 1, scores


def test_every_package_of_the_grader_is_in_the_wheel() -> None:
    """pyproject lists the packages by name: a new folder of grader/ missing there is missing
    from every install but an editable one (grader.warm was, and every check crashed)."""
    import tomllib
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "grader").rglob("__init__.py")}
    assert found <= listed, f"not in pyproject.toml's packages: {sorted(found - listed)}"


def test_the_dependencies_the_grader_names_are_pyproject_tomls() -> None:
    # grader.DEPENDENCIES is what a pack pins without jaxgrade's metadata and what a crash names
    # as missing from the install: pyproject.toml's list, by name.
    import tomllib
    from grader import DEPENDENCIES
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert sorted(re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in declared) == sorted(DEPENDENCIES)
