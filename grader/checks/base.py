"""The shape every check has, and the context checks read a submission through."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from grader.outcome import Category, Outcome

if TYPE_CHECKING:
    from grader.observe.session import Session


@dataclass
class Context:
    """What a check may use: the live session, the exercise's probe input, the seed, and
    how to name the submission in a reproduce command."""
    session: "Session"
    probe: np.ndarray
    seed: int
    function: str
    module: str
    devices: int

    def memo(self, key: str, compute: Any) -> Any:
        """Compute a shared observation once per submission (several checks read it)."""
        if key not in self.session.cache:
            self.session.cache[key] = compute()
        return self.session.cache[key]


@dataclass(frozen=True, kw_only=True)
class Check(ABC):
    """A named, categorised judgement. Subclasses implement ``judge``; points are attached
    from the exercise's metadata, so the same check serves exercises weighted differently."""
    id: str
    title: str
    hint: str | None = None
    category: ClassVar[Category]

    @abstractmethod
    def judge(self, context: Context) -> Outcome:
        """Look at the submission through ``context`` and conclude."""

    def prepare(self, seed: int) -> None:
        """Work that needs no submission (drawing inputs), done while the child starts."""
