"""What JAX and its plugins print while a child starts is not the submission's output: beside a
JAX plugin that prints and warns when imported and when initialised (as cloud_tpu_init.py does
on a Cloud TPU VM), a report holds what the student printed and nothing of the plugin's."""
from __future__ import annotations

import json
import os
import subprocess

from conftest import REPO, SEED_EXERCISE, base_python_without_jax, dependencies_into

# Found by JAX as every plugin is (the jax_plugins namespace package, beside jax): imported and
# initialised when the child's backend starts, before the submission is loaded.
NOISY_PLUGIN = '''
import os
import warnings

print("noisy plugin: imported")
warnings.warn("noisy plugin: Transparent hugepages are not enabled.")
os.write(2, b"noisy plugin: written past Python\\n")


def initialize():
    print("noisy plugin: initialize() called")
'''
# The reference, which refuses to load unless the plugin was imported (so the test cannot pass
# for want of a plugin), and prints a line of its own.
STUDENT = (SEED_EXERCISE / "reference.py").read_text() + '''
import sys
if "jax_plugins.noisy" not in sys.modules:
    raise ImportError("the noisy plugin was not imported in this child")
print("printed by the student")
'''


def test_a_plugins_startup_output_is_not_the_students(tmp_path):
    python = base_python_without_jax()
    site = tmp_path / "site"
    dependencies_into(site)
    (site / "jax_plugins" / "noisy").mkdir(parents=True)
    (site / "jax_plugins" / "noisy" / "__init__.py").write_text(NOISY_PLUGIN)
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "solution.py").write_text(STUDENT)
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "PATH": "/usr/bin:/bin", "NO_COLOR": "1",
           "JAXGRADE_NO_DAEMON": "1",
           "JAXGRADE_CACHE": os.environ["JAXGRADE_CACHE"]}
    done = subprocess.run([python, "-m", "grader", "check", "student/solution.py", "-e", "named_sharding_replicated",
                           "--format", "md"], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "printed by the student" in done.stdout
    assert "noisy plugin" not in done.stdout and "hugepages" not in done.stdout, done.stdout
    printed = len("printed by the student\n")
    assert f"printed {printed} bytes" in done.stdout  # the student's line, and not a byte more


def test_the_report_says_which_platform_it_graded_on(seed_exercise):
    from grader import grade, render
    report = grade(seed_exercise, SEED_EXERCISE / "reference.py", seed=0)
    assert report.environment["platform"] == "cpu"
    assert json.loads(render(report, "json"))["environment"]["platform"] == "cpu"
