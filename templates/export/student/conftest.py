# pytest reads this file in this folder. The tests here are the checks jaxgrade's pytest plugin
# collects from jaxgrade.toml; a pytest that cannot load that plugin (one installed without
# jaxgrade, or with plugins switched off) would otherwise find no test and report "no tests ran".
import sys

import pytest


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("jaxgrade"):
        raise pytest.UsageError(
            f"this folder's tests are jaxgrade's checks, and this pytest ({sys.executable}) cannot load "
            "jaxgrade's pytest plugin. Install both into the Python you run them with, then run pytest "
            "through it:  python -m pip install -c constraints.txt jaxgrade pytest  and then  python -m pytest  "
            "(or run the checks without pytest:  python check)")
