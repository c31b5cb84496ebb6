"""Stage 1: run a submission in a confined child process (process, confine, pool) and talk
to it over a private channel (protocol). Nothing here judges anything."""
