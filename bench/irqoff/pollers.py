#!/usr/bin/env python3
"""Open COUNT cpu.stat.stream files spread over the cgroups under TOP, add
them all to one epoll set, and wait in epoll_wait, reading each ready file
(so that it waits for the next publication) until killed."""
import os, resource, select, sys, threading

top, count = sys.argv[1], int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (count + 1024, count + 1024))
dirs = sorted(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d)))
ep = select.epoll()
fds = []
for i in range(count):
    fd = os.open(os.path.join(top, dirs[i % len(dirs)], "cpu.stat.stream"), os.O_RDONLY)
    ep.register(fd, select.EPOLLIN | select.EPOLLPRI)
    fds.append(fd)
open(f"/tmp/irqoff-ready.{os.getpid()}", "w").close()
while True:
    for fd, _ in ep.poll(maxevents=4096):
        try:
            os.pread(fd, 4096, 0)
        except OSError:
            pass
