"""``python -m grader.authoring.export autograde|lock|warm-cache|prairielearn-grade``: the exported scripts' entry."""
import sys

from grader.authoring.export.command import main

sys.exit(main(sys.argv[1:]))
