#!/bin/bash
# PrairieLearn's external grader entrypoint for exercise @SLUG@ (info.json: /grade/tests/run.sh).
# It runs as root in the jaxgrade grader image: grades the file in /grade/student with the
# exercise in /grade/tests/exercises and writes /grade/results/results.json. Before grading it
# closes the exercise to other users and proves the submission's uid cannot read it, as the
# Gradescope export does. A grader fault becomes "gradable": false (no attempt is counted); an
# unforeseen crash exits non-zero, which PrairieLearn also treats as not gradable.
set -uo pipefail
GRADE="${JAXGRADE_GRADE_ROOT:-/grade}"
PYTHON="${JAXGRADE_PYTHON:-python3}"
export JAXGRADE_EXERCISES="$GRADE/tests/exercises"
# The container lives for one submission: a compilation cache would first have to be filled
# from the reference, which costs more than it saves.
export JAXGRADE_CACHE="${JAXGRADE_CACHE:-off}"
mkdir -p "$GRADE/results"
# -I: the working directory may be the student's folder; a grader.py there must never be imported
# by this root process (nor a user site, nor PYTHON* variables): the image's installed jaxgrade only.
exec "$PYTHON" -I -m grader.authoring.export prairielearn-grade --root "$GRADE" -e @SLUG@
