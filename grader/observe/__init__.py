"""Stage 2: what a submission did, on the grader's side. ``session`` is the grader's side of one
live child (what runs inside it is ``grader.child``); ``returned`` parses its replies;
``program`` reads the recorded programs."""
