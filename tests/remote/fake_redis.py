#!/usr/bin/env python3
"""A hostile Redis server for the remote cache's tests (issue 33), standard
library only. It listens on 127.0.0.1 at a port the kernel picks (never any
other address), prints "port N" on its first line, answers every command as
its mode says, and exits after --lifetime seconds whatever happens.

Modes:
  drip       each reply, a valid 11-byte bulk string, one byte per 0.5 s
  huge       each reply declares a 6 GiB bulk string, then streams zeros for
             as long as the client reads
  shortkey   SCAN returns cursor 0 and one name, "abc", shorter than any
             prefix; other commands get an empty bulk string
  endless    SCAN returns cursor 1 and no names, forever; other commands get
             an empty bulk string
  raw:TEXT   every command gets TEXT (Python escapes: raw::5\\r\\n)

--count-file F: the number of commands it answered, written when it ends
(SIGTERM, or its lifetime over).
"""
import argparse
import signal
import socket
import sys
import threading
import time

SIX_GIB = 6 << 30


def read_command(conn, buf):
    """One RESP array of bulk strings from conn; returns (args, rest) or (None, b'')."""
    def need(n):
        nonlocal buf
        while len(buf) < n:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            buf += chunk
        return True

    def line():
        nonlocal buf
        while b"\r\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            buf += chunk
        head, _, buf = buf.partition(b"\r\n")
        return head

    head = line()
    if head is None or not head.startswith(b"*"):
        return None, b""
    args = []
    for _ in range(int(head[1:])):
        size = line()
        if size is None or not size.startswith(b"$"):
            return None, b""
        n = int(size[1:])
        if not need(n + 2):
            return None, b""
        args.append(buf[:n])
        buf = buf[n + 2:]
    return args, buf


class Server:
    def __init__(self, mode, count_file):
        self.mode = mode
        self.count_file = count_file
        self.count = 0
        self.lock = threading.Lock()

    def counted(self):
        with self.lock:
            self.count += 1

    def finish(self, *_):
        if self.count_file:
            with self.lock, open(self.count_file, "w") as f:
                f.write("%d\n" % self.count)
        sys.exit(0)

    def answer(self, conn, args):
        name = args[0].upper() if args else b""
        if self.mode == "drip":
            for b in b"$5\r\nhello\r\n":
                conn.sendall(bytes([b]))
                time.sleep(0.5)
        elif self.mode == "huge":
            conn.sendall(b"$%d\r\n" % SIX_GIB)
            zeros = bytes(1 << 20)
            for _ in range(SIX_GIB >> 20):
                conn.sendall(zeros)
        elif self.mode == "shortkey" and name == b"SCAN":
            conn.sendall(b"*2\r\n$1\r\n0\r\n*1\r\n$3\r\nabc\r\n")
        elif self.mode == "endless" and name == b"SCAN":
            conn.sendall(b"*2\r\n$1\r\n1\r\n*0\r\n")
        elif self.mode.startswith("raw:"):
            conn.sendall(self.mode[4:].encode("latin-1").decode("unicode_escape").encode("latin-1"))
        else:
            conn.sendall(b"$0\r\n\r\n")

    def serve(self, conn):
        buf = b""
        try:
            while True:
                args, buf = read_command(conn, buf)
                if args is None:
                    return
                self.counted()
                self.answer(conn, args)
        except OSError:
            pass  # the client gave up: what the tests want
        finally:
            conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode")
    p.add_argument("--lifetime", type=float, default=30.0)
    p.add_argument("--count-file")
    a = p.parse_args()
    server = Server(a.mode, a.count_file)
    signal.signal(signal.SIGTERM, server.finish)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    print("port %d" % listener.getsockname()[1], flush=True)
    end = time.monotonic() + a.lifetime
    while time.monotonic() < end:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        conn.settimeout(None)
        threading.Thread(target=server.serve, args=(conn,), daemon=True).start()
    server.finish()


if __name__ == "__main__":
    main()
