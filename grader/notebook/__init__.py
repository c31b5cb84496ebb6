"""Notebooks, in one package: a notebook submission read as the Python of its cells, and the
check a student runs from a notebook's cell (``grader.check()``).

    runs          what the saved file says of how its kernel ran it: which definition is
                  graded, which cell is the check cell
    convert       a notebook's code cells made the Python the child runs (IPython's lines,
                  imports the grader lacks, the table of cells the child runs one by one)
    kernel_cells  grading the cells a live kernel ran (``grader.check()``)
    check         ``grader.check()`` itself: ask the warm service, else grade in-process
    warm_cells    the warm service's side of a notebook check
    display       a report shown in a notebook (``Report._repr_html_``)

What runs the cells inside the sandboxed child stays with the child (grader.child.cells,
grader.child.run_cells), which imports nothing of the grader's but the wire.
"""
