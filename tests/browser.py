"""Headless Chromium for the HTML tests: run it, and audit a page with axe-core in it.

Chromium is Debian's package (.ci/run installs it); axe-core comes from the npm registry
(``make test`` installs it into .venv/node_modules with npm). :func:`audit` loads a copy of
the page with axe-core's own script inlined at the end of the body, in an iframe exactly as
wide as the screen it stands for (headless Chromium makes no window narrower than 500 px; an
iframe's document lays out in a viewport of the iframe's size, media queries included), lets
axe run there and reads back what it found (posted to the outer page once axe is done, then
dumped with its DOM): every violation of every rule axe runs by default, and whether the page
is wider than its viewport (a phone would scroll it sideways).
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
AXE = REPO / ".venv" / "node_modules" / "axe-core" / "axe.min.js"
NO_CHROMIUM = "Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)"
NO_AXE = ("axe-core is not installed in .venv/node_modules: make test installs it with npm "
          "(apt-get install npm; .ci/run does)")

# Runs once axe has finished: the violations, and how wide the page is against the window.
_REPORTER = """
axe.run(document, {resultTypes: ["violations"]}).then(function (found) {
  var root = document.documentElement, width = root.clientWidth;
  var wide = Array.prototype.filter.call(document.querySelectorAll("body *"), function (element) {
    var style = getComputedStyle(element);  // a box its content overflows, and that does not scroll itself
    return element.scrollWidth > element.clientWidth + 1 && style.overflowX === "visible" && style.display !== "inline"
      || element.getBoundingClientRect().right > width + 1 && !element.closest(".scroll");
  }).slice(0, 8).map(function (element) { return element.tagName.toLowerCase() + "." + (element.getAttribute("class") || ""); });
  parent.postMessage(JSON.stringify({
    violations: found.violations.map(function (v) {
      return {id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.map(function (n) { return n.target.join(" "); })};
    }),
    scroll_width: root.scrollWidth, client_width: width, wide: wide}), "*");
});
"""
# The outer page: the audited page in an iframe of the screen's size, and what it posts, as text.
_FRAME = """<!DOCTYPE html><html lang="en"><title>audit</title><body style="margin: 0">
<iframe src="{src}" title="audited page" width="{width}" height="900" style="border: 0; display: block"></iframe>
<script>window.addEventListener("message", function (event) {{
  var out = document.createElement("pre"); out.id = "jaxgrade-audit"; out.textContent = event.data;
  document.body.appendChild(out); }});</script></body></html>"""


def chromium(profiles: Path, *arguments: str) -> subprocess.CompletedProcess:
    """Chromium headless, with a fresh profile in ``profiles`` and nothing fetched on its own behalf."""
    profile = profiles / f"profile-{len(list(profiles.glob('profile-*')))}"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def audit(page: str, width: int, folder: Path) -> dict:
    """What axe-core finds in ``page`` (an HTML document) at a window ``width`` px wide, and the
    page's scroll width against the window's (``scroll_width`` > ``client_width``: it scrolls sideways)."""
    closing = page.rindex("</body>")
    script = AXE.read_text(encoding="utf-8").replace("</script", "<\\/script")
    audited = page[:closing] + f"<script>{script}</script><script>{_REPORTER}</script>" + page[closing:]
    number = len(list(folder.glob("audit-*")))
    path, frame = folder / f"audit-{number}.html", folder / f"audit-{number}-frame.html"
    path.write_text(audited, encoding="utf-8")
    frame.write_text(_FRAME.format(src=path.as_uri(), width=width), encoding="utf-8")
    done = chromium(folder, f"--window-size={max(width, 500) + 40},1000", "--virtual-time-budget=60000",
                    "--dump-dom", frame.as_uri())
    start = done.stdout.find('<pre id="jaxgrade-audit">')
    assert start >= 0, f"axe-core did not finish in Chromium: {done.stderr[-2000:]}"
    text = done.stdout[start + len('<pre id="jaxgrade-audit">'):done.stdout.index("</pre>", start)]
    return json.loads(text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&"))


def notebook_page(fragment: str, background: str, colour: str) -> str:
    """A minimal notebook-like page: its own background and text colour, which the fragment
    must not rely on, and the outputs inside its <main>."""
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>notebook</title></head>'
            f'<body style="background: {background}; color: {colour}"><main><h1>Notebook</h1>'
            f'<div class="output">{fragment}</div></main></body></html>')
