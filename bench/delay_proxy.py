#!/usr/bin/python3
"""A TCP proxy that makes a local object store look remote: latency, a bandwidth cap, counters.

Usage: delay_proxy.py --upstream HOST:PORT --listen NAME=PORT [--listen NAME=PORT ...]
                      [--delay-ms 20] [--bandwidth 200M] [--control PORT]

For the remote profile of bench/remote.py: every peer (s3fs, rclone, mmfs) talks to the store
through its own listening port, its "group", so that the bytes each one pulls from the store are
counted apart. Every byte goes through the one proxy, so the bandwidth cap is shared, as an
uplink would be.

- Latency: a response is held --delay-ms before its first byte is forwarded. A response starts
  when the store sends bytes on a connection whose client has sent bytes since the last response
  began: right for HTTP/1.1 request/response (keep-alive, no pipelining), which is what the
  clients here speak. The delay is added to the store's own time to first byte.
- Bandwidth: one token bucket for all connections (store-to-client bytes only; requests are
  small), --bandwidth bytes a second, with a burst of 256 KiB.
- Requests: passed as they are, except in a group listed with ",add-sha256": there a GET or
  HEAD without an x-amz-content-sha256 header gets one (the hash of the empty payload, which is
  what the client signed). S3, and s3rver, refuse a SigV4 request without it, and curl before
  8.x (Debian 12 has 7.88), whose CURLOPT_AWS_SIGV4 signs mmfs's requests, does not send it.
- Counters, per group: connections, responses, bytes from the store and bytes to it.
  `GET /stats` on --control returns them as JSON with the proxy's own CPU seconds (so a bench
  can show the proxy is not its bottleneck). `POST /reset` zeroes them.

On start it prints one JSON line to stdout, {"control": PORT, "groups": {NAME: PORT}}, with the
ports it bound (port 0 picks a free one), then serves until SIGTERM or SIGINT. It binds 127.0.0.1
only.

Ownership: the proxy owns its sockets; each client connection owns its upstream connection.
Thread-safety: one asyncio loop in one thread; nothing is shared across threads.
"""
import argparse
import asyncio
import json
import os
import resource
import signal
import sys
import time

CHUNK = 256 * 1024
BURST = 256 * 1024


def parse_bytes(text):
    units = {"k": 10**3, "m": 10**6, "g": 10**9}
    t = text.strip().lower().rstrip("b")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


class TokenBucket:
    """Paces bytes to `rate` a second over every connection, allowing a burst of BURST bytes.
    A virtual clock: each take() reserves its slot at once, so waiters are paid in call order."""

    def __init__(self, rate):
        self.rate = rate
        self.next_free = time.monotonic()

    async def take(self, n):
        if self.rate <= 0:
            return
        now = time.monotonic()
        # next_free: when every byte taken so far has been paid for; up to BURST may be owed.
        self.next_free = max(now, self.next_free) + n / self.rate
        wait = self.next_free - now - BURST / self.rate
        if wait > 0:
            await asyncio.sleep(wait)


# The SHA-256 of an empty payload: what a SigV4 signer hashes for a GET.
EMPTY_SHA256 = b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def add_content_sha256(head):
    """A request head (without its final blank line) with x-amz-content-sha256 added when it is
    missing, and whether the rest of the connection must pass as it is (a request with a body,
    whose end this proxy does not track). For a GET or HEAD, the header's value is the hash of
    the empty payload, which is what the client signed, so the signature still holds."""
    lines = head.split(b"\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    has_body = fields.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in fields
    if lines[0].split(b" ", 1)[0] not in (b"GET", b"HEAD") or has_body:
        return head, True
    if b"x-amz-content-sha256" not in fields:
        lines.append(b"x-amz-content-sha256: " + EMPTY_SHA256)
    return b"\r\n".join(lines), False


class Group:
    def __init__(self, name, add_sha256=False):
        self.name = name
        self.add_sha256 = add_sha256
        self.reset()

    def reset(self):
        self.connections = 0
        self.responses = 0
        self.bytes_down = 0  # store to client
        self.bytes_up = 0    # client to store

    def as_dict(self):
        return {"connections": self.connections, "responses": self.responses,
                "bytes_down": self.bytes_down, "bytes_up": self.bytes_up}


class Proxy:
    def __init__(self, upstream, delay, bucket):
        self.upstream = upstream
        self.delay = delay
        self.bucket = bucket
        self.groups = {}
        self.open = 0

    async def serve_client(self, group, creader, cwriter):
        group.connections += 1
        self.open += 1
        try:
            sreader, swriter = await asyncio.open_connection(*self.upstream)
        except OSError:
            cwriter.close()
            self.open -= 1
            return
        # Set by the client's bytes, cleared when the store's next response begins.
        state = {"asked": False}

        async def up():
            head = b""  # a request's head not forwarded yet (group.add_sha256 only)
            passthrough = not group.add_sha256
            try:
                while True:
                    data = await creader.read(CHUNK)
                    if not data:
                        break
                    state["asked"] = True
                    group.bytes_up += len(data)
                    if not passthrough:
                        head += data
                        data = b""
                        while b"\r\n\r\n" in head:
                            one, head = head.split(b"\r\n\r\n", 1)
                            one, passthrough = add_content_sha256(one)
                            data += one + b"\r\n\r\n"
                            if passthrough:
                                data, head = data + head, b""
                                break
                    swriter.write(data)
                    await swriter.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                if swriter.can_write_eof():
                    try:
                        swriter.write_eof()
                    except OSError:
                        pass

        async def down():
            try:
                while True:
                    data = await sreader.read(CHUNK)
                    if not data:
                        break
                    if state["asked"]:
                        state["asked"] = False
                        group.responses += 1
                        if self.delay > 0:
                            await asyncio.sleep(self.delay)
                    await self.bucket.take(len(data))
                    group.bytes_down += len(data)
                    cwriter.write(data)
                    await cwriter.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass

        tasks = [asyncio.ensure_future(up()), asyncio.ensure_future(down())]
        try:
            # The store closing ends the connection; the client closing its side only ends
            # its requests (the store may still be answering the last one).
            await tasks[1]
        finally:
            for t in tasks:
                t.cancel()
            for w in (cwriter, swriter):
                try:
                    w.close()
                except OSError:
                    pass
            self.open -= 1

    def stats(self):
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return {"cpu_seconds": ru.ru_utime + ru.ru_stime, "open_connections": self.open,
                "delay_ms": self.delay * 1000, "bandwidth": self.bucket.rate,
                "groups": {n: g.as_dict() for n, g in self.groups.items()}}

    async def serve_control(self, reader, writer):
        """A minimal HTTP/1.0 endpoint: GET /stats, POST /reset; one request a connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            method, path = head.split(b" ", 2)[:2]
            if method == b"POST" and path == b"/reset":
                for g in self.groups.values():
                    g.reset()
                body, status = b"{}", b"200 OK"
            elif path == b"/stats":
                body, status = json.dumps(self.stats()).encode(), b"200 OK"
            else:
                body, status = b"{}", b"404 Not Found"
            writer.write(b"HTTP/1.0 " + status + b"\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()


async def main_async(args):
    host, port = args.upstream.rsplit(":", 1)
    proxy = Proxy((host, int(port)), args.delay_ms / 1000.0,
                  TokenBucket(parse_bytes(args.bandwidth)))
    servers, bound = [], {}
    for item in args.listen:
        name, _, p = item.partition("=")
        p, _, flag = p.partition(",")
        if flag not in ("", "add-sha256"):
            sys.exit(f"--listen {item}: unknown flag {flag}")
        group = proxy.groups[name] = Group(name, flag == "add-sha256")
        server = await asyncio.start_server(
            lambda r, w, g=group: proxy.serve_client(g, r, w), "127.0.0.1", int(p or 0))
        servers.append(server)
        bound[name] = server.sockets[0].getsockname()[1]
    control = await asyncio.start_server(proxy.serve_control, "127.0.0.1", args.control)
    servers.append(control)
    print(json.dumps({"control": control.sockets[0].getsockname()[1], "groups": bound,
                      "pid": os.getpid()}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for s in servers:
        s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True, help="HOST:PORT of the store")
    ap.add_argument("--listen", action="append", required=True,
                    help="NAME=PORT[,add-sha256]: a group's listening port (0: a free one); "
                    "repeatable")
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--bandwidth", default="200M", help="bytes a second, all groups (0: no cap)")
    ap.add_argument("--control", type=int, default=0, help="the control port (0: a free one)")
    args = ap.parse_args()
    try:
        asyncio.run(main_async(args))
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
