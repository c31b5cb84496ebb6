"""Stage 2: what a submission did. ``child`` runs inside the sandbox and records raw facts;
``session`` is the grader's side of one live child; ``program`` reads the recorded programs.
Kept empty: the child imports ``grader.observe.child`` and must start fast."""
