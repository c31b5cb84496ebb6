"""A control group per child: memory (shared memory, memfd and its scratch tmpfs included), processes
and CPU weight, counted for everything the submission starts.

``RLIMIT_AS`` bounds one process's address space, but pages of shared memory and memfd belong
to no process's limit, and a background process has its own. A control group counts every
page its processes touch, whoever maps them, and the kernel stops the group (its own OOM kill)
at the bound instead of picking another process of the machine. cgroup v2 is used where the
grader's own group can give its children the memory and pids controllers; otherwise the v1
memory, pids and cpu hierarchies where their folders are writable (the grader is root);
otherwise nothing, and the report's protections say why. The grader makes the group before
the child starts and moves the child into it; the submission's process joins it itself if that
came too late (``Policy.cgroups``), before it drops its uid.
"""
from __future__ import annotations

import functools
import os
import signal
import time
from dataclasses import dataclass

V1_CONTROLLERS = ("memory", "pids", "cpu")


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root inside the hierarchy, mount point, file system type, super options) of each mount."""
    found = []
    try:
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                before, _, after = line.partition(" - ")
                fields, tail = before.split(), after.split()
                if len(fields) >= 5 and len(tail) >= 3:
                    found.append((fields[3], fields[4], tail[0], set(tail[2].split(","))))
    except OSError:
        pass
    return found


def _own_groups() -> dict[str, str]:
    """The grader's own group in each hierarchy, by controller ("" for v2's single hierarchy)."""
    groups = {}
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    groups[name.removeprefix("name=")] = path
    except (OSError, ValueError):
        pass
    return groups


def _folder(mount_root: str, mount_point: str, path: str) -> str | None:
    if mount_root != "/" and not (path == mount_root or path.startswith(mount_root + "/")):
        return None  # our group is outside what this mount shows
    return os.path.join(mount_point, path[len(mount_root.rstrip("/")):].lstrip("/"))


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


@functools.lru_cache(maxsize=1)
def hierarchies() -> tuple[int, dict[str, str], str]:
    """(version, {controller: the folder under which a child's groups are made}, why none): v2
    where the grader's group has or can give its children the memory and pids controllers, else
    v1's memory and pids hierarchies (and cpu's, where there is one)."""
    mounts, own = _mounts(), _own_groups()
    why = []
    for root, point, kind, _ in mounts:
        base = _folder(root, point, own[""]) if kind == "cgroup2" and "" in own else None
        if base is None:
            continue
        offered = set(_read(os.path.join(base, "cgroup.controllers")).split())
        if not {"memory", "pids"} <= offered:
            why.append(f"cgroup v2 at {point} offers no memory and pids controllers here")
            continue
        try:
            if not {"memory", "pids"} <= set(_read(os.path.join(base, "cgroup.subtree_control")).split()):
                _write(os.path.join(base, "cgroup.subtree_control"),
                       " ".join(f"+{c}" for c in V1_CONTROLLERS if c in offered))
        except OSError as error:
            why.append(f"cgroup v2 at {base} cannot give its children controllers ({error.strerror})")
            continue
        if os.access(base, os.W_OK):
            return 2, {c: base for c in V1_CONTROLLERS}, ""
        why.append(f"cgroup v2 at {base} is not writable")
    found: dict[str, str] = {}
    for controller in V1_CONTROLLERS:
        for root, point, kind, options in mounts:
            base = _folder(root, point, own[controller]) if kind == "cgroup" and controller in options \
                and controller in own else None
            if base and os.access(base, os.W_OK):
                found[controller] = base
                break
    missing = [c for c in ("memory", "pids") if c not in found]  # CPU weight is a nicety; these bound a student
    if not missing:
        return 1, found, ""
    why.append("no writable cgroup v1 " + " or ".join(missing) + " hierarchy")
    return 0, {}, "; ".join(why)


@dataclass
class ChildGroup:
    """The control group of one child: one folder in v2, one per controller in v1."""
    version: int
    folders: dict[str, str]  # controller -> the child's folder
    memory_mib: int
    processes: int

    @classmethod
    def make(cls, name: str, memory_mib: int, processes: int) -> "ChildGroup | str":
        """Make the child's group with its limits, or say why there is none."""
        version, bases, why = hierarchies()
        if not bases:
            return why
        group = cls(version, {}, memory_mib, processes)
        try:
            for controller, base in bases.items():
                folder = os.path.join(base, name)
                if folder not in group.folders.values():
                    os.mkdir(folder, 0o755)
                group.folders[controller] = folder
            for file, value in _limits(version, memory_mib, processes):
                path = group._file(file)
                if path and os.path.exists(path):
                    _write(path, value)
        except OSError as error:
            group.remove()
            return f"could not make a control group under {', '.join(set(bases.values()))}: {error.strerror or error}"
        return group

    @property
    def paths(self) -> tuple[str, ...]:
        """The folders whose ``cgroup.procs`` the child joins."""
        return tuple(dict.fromkeys(self.folders.values()))

    def detail(self) -> str:
        return (f"its own control group (cgroup v{self.version}) holds all it starts: {self.memory_mib} MiB of memory "
                "with shared memory, memfd and its scratch tmpfs counted (past it the kernel stops the child), "
                f"{self.processes} processes and threads" + (", the CPU weight of any other child" if "cpu" in
                                                               self.folders else " (no CPU weight: no cpu hierarchy)"))

    def _file(self, name: str) -> str | None:
        folder = self.folders.get(name.split(".")[0])
        return os.path.join(folder, name) if folder else None

    def add(self, pid: int) -> None:
        """Move ``pid`` (the child the grader just started) into the group, best effort. The
        first move into a cgroup waits for an RCU grace period (~10 ms here): done by the
        grader while the child starts, it costs the child nothing; whatever the child forks
        afterwards is in the group too, and the child joins itself if this came too late."""
        for folder in self.paths:
            try:
                _write(os.path.join(folder, "cgroup.procs"), str(pid))
            except OSError:
                return  # gone already, or not ours to move: the child joins itself

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group for going past its memory bound."""
        path = self._file("memory.events" if self.version == 2 else "memory.oom_control")
        for line in _read(path).splitlines() if path else ():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value) > 0
        return False

    def remove(self) -> list[str]:
        """Kill what is still in the group (the child's processes are dead by now: this catches
        only what escaped), then remove its folders; returns what could not be removed."""
        leaks = []
        for folder in self.paths:
            deadline = time.monotonic() + 2.0
            while True:
                for pid in _read(os.path.join(folder, "cgroup.procs")).split():
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (ProcessLookupError, PermissionError, ValueError):
                        pass
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError as error:  # busy until its last process is reaped
                    if time.monotonic() > deadline:
                        leaks.append(f"{folder}: {error.strerror}")
                        break
                    time.sleep(0.005)
        return leaks


def _limits(version: int, memory_mib: int, processes: int) -> list[tuple[str, str]]:
    memory = str(memory_mib << 20)
    if version == 2:
        return [("memory.max", memory), ("memory.swap.max", "0"), ("pids.max", str(processes)),
                ("cpu.weight", "100")]
    return [("memory.limit_in_bytes", memory), ("memory.memsw.limit_in_bytes", memory),
            ("pids.max", str(processes)), ("cpu.shares", "1024")]
