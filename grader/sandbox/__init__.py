"""Stage 1: run a submission in a child process (process, pool), confined by the child itself
(grader.child.confine), and talk to it over the private channel (grader.wire). Nothing here
judges anything."""
