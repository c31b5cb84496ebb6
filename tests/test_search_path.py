"""The child's path: the parent's folders of the grader's dependencies and the child's own
entries, in the parent's order; nothing else of the parent's."""
from __future__ import annotations

from grader.child.search_path import merged


def test_the_childs_path_follows_the_parents_order_and_keeps_nothing_else():
    own = ["/py/lib/python311.zip", "/py/lib/python3.11", "/venv/site-packages", "/venv/added-by-pth"]
    order = ["/home/class", "/opt/jax-module", "/py/lib/python311.zip", "/py/lib/python3.11", "/venv/site-packages",
             "/home/me/.local/site-packages"]
    needed = ["/opt/jax-module", "/home/me/.local/site-packages", "/elsewhere/jax"]
    assert merged(own, order, needed) == [
        "/elsewhere/jax",  # needed, not on the parent's path (found by a finder): first
        "/opt/jax-module", "/py/lib/python311.zip", "/py/lib/python3.11", "/venv/site-packages",
        "/home/me/.local/site-packages",
        "/venv/added-by-pth"]  # the child's own, which the parent's path does not hold: last
    # "/home/class" (the parent's current folder) is neither needed nor the child's own: never there


def test_an_entry_of_the_childs_own_keeps_its_spelling(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert merged([str(tmp_path / "link")], [str(real)], []) == [str(tmp_path / "link")]
