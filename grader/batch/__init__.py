"""Stage 5: a whole class. ``intake`` finds the submissions, ``run`` grades them (here or on a
cluster, ``distributed``), ``gradebook`` and ``summary`` write what instructors read."""
