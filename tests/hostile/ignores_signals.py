"""Ignores every catchable signal, then never returns: only SIGKILL ends it."""
import signal

for number in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP, signal.SIGXCPU, signal.SIGUSR1):
    signal.signal(number, signal.SIG_IGN)


def replicated_sharding_value(x):
    while True:
        try:
            pass
        except BaseException:
            pass
