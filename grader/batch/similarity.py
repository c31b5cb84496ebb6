"""Pairs of a class's submissions whose code is near-identical once the starter's code is taken
out: listed in the class summary for an instructor to review, never graded, never a verdict.

A submission's code is read as Python tokens with every name it binds itself (variables,
parameters, its functions and classes, import aliases) written as one placeholder, strings as
another, and comments, blank lines and layout left out: renamed variables and reworded comments
change nothing, while the library calls it makes (``jax.device_put``, ``NamedSharding``) stay
what they are. Its fingerprint is the set of its runs of :data:`SHINGLE` tokens, less every run
the exercise's starter has (the code everyone was given). Two fingerprints' similarity is their
Jaccard index: the runs both have over the runs either has.

Up to :data:`EXACT_UP_TO` fingerprinted submissions, every pair whose sizes allow the threshold
is compared exactly (a Jaccard index of at least T needs the smaller set to hold at least T of
the larger): a class of 500 made of 185 sources, 38,548 comparisons, takes 0.08 s here; 2,000
take 1.4 s. Above that, comparing every pair grows as n², and datasketch's MinHash (a fixed
seed: the same pairs on every run) with its locality-sensitive index (MinHashLSH) picks the
pairs likely to reach :data:`THRESHOLD` in time linear in n; only those are compared exactly.
The index misses some pairs near the threshold (783 of 911 found in that class of 500), and its
import, with SciPy's, costs 0.5-2 s of CPU a run: more than a class of 24 spends on grading its
submissions' witnesses. grader.batch.summary lists the first 50 pairs and counts the rest.
Submissions with fewer than :data:`MIN_SHINGLES` runs of their own (an untouched starter) are
not compared: too little is theirs to tell. Byte-identical files are the summary's
"identical" list already, and are left out here.
"""
from __future__ import annotations

import ast
import io
import keyword
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from grader.batch.submissions import Submission
from grader.errors import NotebookError
from grader.source import python_of

if TYPE_CHECKING:
    from datasketch import MinHash

SHINGLE = 8          # tokens in a run: about one short statement
THRESHOLD = 0.75     # Jaccard index from which a pair is listed
MIN_SHINGLES = 10    # runs of its own a submission needs to be compared
PERMUTATIONS = 128   # MinHash size: the index's estimate is within about ±0.09 of the true index
SEED = 66            # MinHash's permutations: fixed, so every run lists the same pairs
EXACT_UP_TO = 2000   # fingerprinted submissions compared pair by pair; more go through the index
_STRINGS = {"STRING", "FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END"}
_SKIPPED = {"COMMENT", "NL", "NEWLINE", "INDENT", "DEDENT", "ENCODING", "ENDMARKER", "TYPE_COMMENT"}


@dataclass(frozen=True)
class SimilarPair:
    students: tuple[str, str]  # sorted
    similarity: float          # Jaccard index of their fingerprints, 0..1
    shared: int                # runs of tokens both have

    def as_data(self) -> dict[str, object]:
        return {"students": list(self.students), "similarity": round(self.similarity, 3), "shared": self.shared}


def _bound_names(tree: ast.AST) -> set[str]:
    """The names the code binds itself: what a copier renames."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
    return names


def tokens(code: str) -> list[str]:
    """``code`` as normalised tokens; [] for code Python cannot read (nothing to compare)."""
    try:
        bound = _bound_names(ast.parse(code))
        found = []
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            kind = tokenize.tok_name[token.type]
            if kind in _SKIPPED:
                continue
            if kind in _STRINGS:
                found.append("S")
            elif kind == "NAME" and not keyword.iskeyword(token.string) and token.string in bound:
                found.append("V")
            else:
                found.append(token.string)
        return found
    except (SyntaxError, ValueError, tokenize.TokenError):
        return []


def fingerprint(code: str, starter: frozenset[str] = frozenset()) -> frozenset[str]:
    """The runs of :data:`SHINGLE` normalised tokens ``code`` has and ``starter`` (the starter's
    fingerprint) has not."""
    found = tokens(code)
    runs = {" ".join(found[i:i + SHINGLE]) for i in range(max(len(found) - SHINGLE + 1, 0))}
    return frozenset(runs - starter)


def _minhash(runs: Iterable[str]) -> MinHash:
    from datasketch import MinHash
    sketch = MinHash(num_perm=PERMUTATIONS, seed=SEED)
    sketch.update_batch([run.encode("utf-8") for run in sorted(runs)])
    return sketch


def similar_pairs(codes: Mapping[str, str], starter: str, identical: Iterable[Iterable[str]] = (),
                  exact_up_to: int = EXACT_UP_TO) -> list[SimilarPair]:
    """The pairs of ``codes`` (student -> Python) at :data:`THRESHOLD` or above once ``starter``'s
    runs are taken out, most similar first; pairs within a group of ``identical`` are left out.
    Every pair is considered up to ``exact_up_to`` fingerprints, the index's candidates above."""
    removed = fingerprint(starter)
    prints = {student: fingerprint(code, removed) for student, code in sorted(codes.items())}
    prints = {student: runs for student, runs in prints.items() if len(runs) >= MIN_SHINGLES}
    same = {frozenset(pair) for group in identical for pair in _pairs(sorted(group))}
    candidates = _sized(prints) if len(prints) <= exact_up_to else _indexed(prints)
    found = []
    for student, other in candidates:
        if frozenset((student, other)) in same:
            continue
        shared = len(prints[student] & prints[other])
        similarity = shared / (len(prints[student]) + len(prints[other]) - shared)
        if similarity >= THRESHOLD:
            found.append(SimilarPair((student, other), similarity, shared))
    return sorted(found, key=lambda pair: (-pair.similarity, pair.students))


def _sized(prints: Mapping[str, frozenset[str]]) -> Iterable[tuple[str, str]]:
    """Every pair (sorted) whose sizes allow :data:`THRESHOLD`: by size, each fingerprint meets
    the larger ones until they are too large for it."""
    order = sorted(prints, key=lambda student: (len(prints[student]), student))
    for i, student in enumerate(order):
        size = len(prints[student])
        for other in order[i + 1:]:
            if size < THRESHOLD * len(prints[other]):
                break
            yield (student, other) if student < other else (other, student)


def _indexed(prints: Mapping[str, frozenset[str]]) -> Iterable[tuple[str, str]]:
    """The pairs (sorted) datasketch's index finds likely to reach :data:`THRESHOLD`."""
    from datasketch import MinHashLSH  # here, not at import: with SciPy's integrate it takes ~0.5-2 s
    index = MinHashLSH(threshold=THRESHOLD, num_perm=PERMUTATIONS)
    sketches = {student: _minhash(runs) for student, runs in prints.items()}
    for student, sketch in sketches.items():
        index.insert(student, sketch)
    for student, sketch in sketches.items():
        for other in sorted(index.query(sketch)):
            if other > student:
                yield student, other


def _pairs(items: list[str]) -> Iterable[tuple[str, str]]:
    return ((a, b) for i, a in enumerate(items) for b in items[i + 1:])


def class_similarity(submissions: Sequence[Submission], starter: Path) -> list[SimilarPair]:
    """:func:`similar_pairs` of a class run's submissions (a notebook: its code cells) against the
    exercise's starter file; a file that cannot be read now is left out (its grading says why)."""
    codes, by_sha = {}, defaultdict(list)
    for submission in submissions:
        try:
            codes[submission.student] = python_of(submission.path.read_bytes(), submission.path.suffix).text
        except (OSError, NotebookError):
            continue
        by_sha[submission.sha256].append(submission.student)
    try:
        given = starter.read_text(encoding="utf-8")
    except OSError:
        given = ""
    return similar_pairs(codes, given, identical=by_sha.values())
