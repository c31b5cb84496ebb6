"""A student's file named grader.py, next to their submission: if the root process that grades
them ever imports it (``python -m grader.authoring.export`` with the student's folder as its working
directory puts that folder first on sys.path), it marks that it ran and writes a full score where
Gradescope and PrairieLearn read results, then ends the process before any real grading."""
import json
import os

open("GRADER-PY-IMPORTED", "w").close()
for results in ("../results/results.json", "results/results.json"):
    try:
        with open(results, "w") as handle:
            json.dump({"score": 1.0, "gradable": True, "tests": []}, handle)
    except OSError:
        pass
os._exit(0)
