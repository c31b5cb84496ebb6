"""Leaves one of every kind of shared object behind for the next student, each holding a canary:
a System V shared memory segment, a semaphore set (its value) and a message queue, all under
fixed keys; a POSIX message queue; and a background process in its own session that keeps a
memfd open. Prints what it made, so the test knows it really did."""
import ctypes
import os
import secrets
import shutil
import subprocess

CANARY = b"{CANARY}"
KEY = 0x4A470024
IPC_CREAT, SETVAL = 0o1000, 16
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)


class Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 64)]


segment = libc.shmget(KEY, 1 << 20, IPC_CREAT | 0o666)
address = libc.shmat(segment, None, 0)
ctypes.memmove(address, CANARY, len(CANARY))
semaphores = libc.semget(KEY, 1, IPC_CREAT | 0o666)
libc.semctl(semaphores, 0, SETVAL, ctypes.c_int(4242))
queue = libc.msgget(KEY, IPC_CREAT | 0o666)
sent = libc.msgsnd(queue, ctypes.byref(Message(1, CANARY)), 64, 0)
mqd = libc.mq_open(b"/jaxgrade-canary", os.O_CREAT | os.O_RDWR, 0o666, None)
posix_sent = libc.mq_send(mqd, CANARY, len(CANARY), 0) if mqd >= 0 else -1
memfd = os.memfd_create("jaxgrade-canary", 0)
os.write(memfd, CANARY)
holder_name = "jgleft" + secrets.token_hex(4)  # its name is that of the file it runs: a copy of sleep
shutil.copy(shutil.which("sleep"), holder_name)
holder = subprocess.Popen([os.path.abspath(holder_name), "300"], pass_fds=(memfd,), start_new_session=True, env={},
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"MADE shm={segment} sem={semaphores} msg={queue}/{sent} mq={mqd}/{posix_sent} memfd={memfd}", flush=True)
print(f"LEFT-BEHIND {holder_name}", flush=True)


def replicated_sharding_value(x):
    return x.sum()
