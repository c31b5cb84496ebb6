"""The next student: looks for what leaves_ipc.py left (the System V objects under its keys,
any System V object at all, the POSIX queue, the process holding the memfd) and prints every
canary it can read."""
import ctypes
import os

KEY = 0x4A470024
GETVAL, IPC_NOWAIT = 12, 0o4000
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)


class Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 64)]


segment = libc.shmget(KEY, 0, 0)
if segment >= 0:
    address = libc.shmat(segment, None, 0)
    if address not in (None, ctypes.c_void_p(-1).value):
        print("FOUND shm", ctypes.string_at(address, 64).split(b"\0")[0].decode(errors="replace"))
semaphores = libc.semget(KEY, 0, 0)
if semaphores >= 0:
    print("FOUND sem", libc.semctl(semaphores, 0, GETVAL))
queue = libc.msgget(KEY, 0)
if queue >= 0:
    message = Message()
    if libc.msgrcv(queue, ctypes.byref(message), 64, 0, IPC_NOWAIT) >= 0:
        print("FOUND msg", message.mtext.decode(errors="replace"))
for kind in ("shm", "sem", "msg"):
    with open(f"/proc/sysvipc/{kind}") as table:
        rows = table.read().splitlines()[1:]
    if rows:
        print(f"FOUND {kind} objects: {len(rows)}")
mqd = libc.mq_open(b"/jaxgrade-canary", os.O_RDONLY | os.O_NONBLOCK)
if mqd >= 0:
    buffer = ctypes.create_string_buffer(8192)
    print("FOUND mq", libc.mq_receive(mqd, buffer, 8192, None), buffer.value.decode(errors="replace"))
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if "jaxgrade-canary" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                with open(f"/proc/{pid}/fd/{fd}", "rb") as handle:
                    print("FOUND memfd", handle.read(64).decode(errors="replace"))
    except OSError:
        continue
print("LOOKED", flush=True)


def replicated_sharding_value(x):
    return x.sum()
