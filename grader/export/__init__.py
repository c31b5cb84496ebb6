"""Package an exercise for where it is used: a Gradescope autograder, a PrairieLearn question, or
a student's folder.

    jaxgrade export gradescope -e SLUG -o autograder.zip
    jaxgrade export prairielearn -e SLUG -o DIR [--image NAME]
    jaxgrade export student -e SLUG -o DIR

One module per platform (:mod:`.gradescope`, :mod:`.prairielearn`, :mod:`.student`), what they
bundle (:mod:`.bundle`: the source, an exercise's files, the scripts in templates/export/),
grading inside their containers (:mod:`.container_grading`, with grader.sandbox.container), and
the command line (:mod:`.command`; ``python -m grader.export`` is what the exported scripts run).
"""
from grader.export.bundle import copy_exercise
from grader.export.command import add_commands
from grader.export.gradescope import autograde, export_gradescope
from grader.export.prairielearn import export_prairielearn, prairielearn_grade
from grader.export.student import export_student, visible_checks_source

__all__ = ["add_commands", "autograde", "copy_exercise", "export_gradescope", "export_prairielearn",
           "export_student", "prairielearn_grade", "visible_checks_source"]
