"""``python -m grader.export autograde|lock|warm-cache|prairielearn-grade``: the exported scripts' entry."""
import sys

from grader.export.command import main

sys.exit(main(sys.argv[1:]))
