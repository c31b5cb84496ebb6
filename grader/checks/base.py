"""The shape every check has, and the context checks read a submission through."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, Self, TypeVar

from grader.outcome import Category, Outcome

if TYPE_CHECKING:
    from grader.arguments import Signature
    from grader.observe.session import Session

T = TypeVar("T")


class ValueOracle(Protocol):
    """What other checks read of the exercise's value property check
    (grader.checks.values.ValueProperty): its inputs, its answer and its tolerance."""
    expected: Callable[..., Any]
    tolerance: Any

    def draw(self, run_seed: int) -> list[dict[str, Any]]: ...


@dataclass
class Context:
    """What a check may use: the live session, the exercise's signature and probe arguments
    (a dict by parameter name), the seed, and how to name the submission in a reproduce command."""
    session: "Session"
    signature: "Signature"
    probe: dict[str, Any]
    seed: int
    function: str
    module: str
    devices: int
    notes: tuple[str, ...] = ()  # what preparing the submission changed (a notebook's magics)
    # The exercise's value property check: its oracle gives the structure checks'
    # counterfactual calls their tolerances, and its inputs a second one.
    values: ValueOracle | None = None
    # False: a failing property check reports its first failing input as drawn, unshrunk (the
    # verdict and score are the same; validation's later seeds need no more).
    shrink: bool = True

    def draw(self, values: ValueOracle) -> list[dict[str, Any]]:
        """What ``values`` draws under this grading's seed. Inputs that depend on the seed come
        only through here: the session then knows that its later calls, and their incidents, may
        depend on the seed (``Session.seeded``)."""
        self.session.seeded = True
        return values.draw(self.seed)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
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
    # Judged once per child: grading under several seeds in one child (grader.engine.grade_seeds)
    # keeps the first verdict. For a check whose calls do not depend on the seed and which counts
    # what the child has not done before (compilations), which earlier gradings would hide.
    judged_once: ClassVar[bool] = False

    @abstractmethod
    def judge(self, context: Context) -> Outcome:
        """Look at the submission through ``context`` and conclude."""

    def same_under_every_seed(self, session: "Session") -> bool:
        """Whether this check's verdict, as judged just now in ``session``, would be the same under
        any other seed, so that grading the submission under more seeds cannot change it
        (``grader.engine.grade_seeds(settled_by=...)``)."""
        return self.judged_once

    def prepare(self, seed: int) -> None:
        """Work that needs no submission (drawing inputs), done while the child starts."""

    def for_function(self, function: str, signature: "Signature") -> Self:
        """This check as the exercise of ``function`` declares it: a check whose default title
        names the function (``LoadsFunction``) is given it here, when the exercise loads."""
        return self

    def problems(self, signature: "Signature", probe: dict[str, Any]) -> list[str]:
        """What is wrong with this check's declaration for an exercise (an operand that names
        no parameter, inputs that do not fit the signature); ``jaxgrade validate`` reports them."""
        return []
