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
    # False: no input is drawn from the seed (``draw`` gives none): a check is judged on what
    # every seed observes alike (grader.engine.grade_seeds, settling a validation).
    draws: bool = True

    def draw(self, values: ValueOracle) -> list[dict[str, Any]]:
        """What ``values`` draws under this grading's seed. Inputs that depend on the seed come
        only through here: the session then knows that its later calls, their answers and their
        incidents may depend on the seed (``Session.seeded``)."""
        if not self.draws:
            return []
        self.session.seeded = True
        return values.draw(self.seed)

    def memo(self, key: str, compute: Callable[[], T], seed_free: bool = False) -> T:
        """Compute a shared observation once per grading (several checks read it). ``seed_free``:
        it depends on no seed (the probe's call and trace), so it is computed once per
        submission and kept for the gradings under other seeds (``Session.begin_grading``)."""
        if key not in self.session.cache:
            self.session.cache[key] = compute()
            if seed_free:
                self.session.seed_free_keys.add(key)
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

    def prepare(self, seed: int, signature: "Signature") -> None:
        """Work that needs no submission (drawing inputs, computing their answers), done while
        the child starts, or once before a class run forks its grading processes (they inherit
        it rather than each doing it for its first submission)."""

    def for_function(self, function: str, signature: "Signature") -> Self:
        """This check as the exercise of ``function`` declares it: a check whose default title
        names the function (``LoadsFunction``) is given it here, when the exercise loads."""
        return self

    def problems(self, signature: "Signature", probe: dict[str, Any]) -> list[str]:
        """What is wrong with this check's declaration for an exercise (an operand that names
        no parameter, inputs that do not fit the signature); ``jaxgrade validate`` reports them."""
        return []
