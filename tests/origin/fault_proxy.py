#!/usr/bin/env python3
"""An HTTP proxy for the remote origin's tests that forwards to one server and fails on request.

    fault_proxy.py --upstream http://127.0.0.1:PORT --port-file FILE
                   [--sigv4-key KEY --sigv4-secret SECRET]

It listens on 127.0.0.1 (a port the kernel picks, written to FILE once it listens) and
forwards every request to the upstream server (nginx, s3rver), keeping the Host header. Paths
that start with /__ are its control channel, answered by itself:

    /__fault?mode=M&count=N&match=S&method=GET&seconds=T
        the next N requests (-1: every one until /__clear) whose path contains S and whose
        method is METHOD (GET unless given) are answered with fault M instead:
          500, 429  that status, without asking the upstream (429 with Retry-After: 0)
          slow      the upstream's answer, its body sent in 16 pieces over T seconds (1)
          truncate  the upstream's status and headers with its full Content-Length, then half
                    the body, then the connection closed
        Rules are tried in the order given; each request takes at most one fault.
    /__clear   drops every rule.
    /__stats   JSON: {"requests": N, "faults": N, "refused": N, "paths": {"GET /p": N, ...}}
               (requests: everything but the control channel; refused: failed the SigV4 check).

With --sigv4-key and --sigv4-secret it checks each request's SigV4 signature (header form, as
libcurl and the AWS SDKs sign) as S3 does, before anything else: unsigned is 403
AccessDenied, a wrong signature 403 SignatureDoesNotMatch; s3rver 3.7 checks neither.

Python 3 standard library only. It serves until killed (the test starts it with
PR_SET_PDEATHSIG). Thread-safety: one thread per client connection; the rules and the counters
are behind one lock.
"""

import argparse
import hashlib
import hmac
import http.client
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-connection", "content-length"}


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []  # dicts: mode, count, match, method, seconds
        self.requests = 0
        self.faults = 0
        self.refused = 0
        self.paths = {}

    def take_fault(self, method, path):
        """The fault this request gets (a rule's copy), or None; counts the request."""
        with self.lock:
            self.requests += 1
            key = method + " " + path
            self.paths[key] = self.paths.get(key, 0) + 1
            for rule in self.rules:
                if rule["count"] == 0 or rule["method"] != method or rule["match"] not in path:
                    continue
                if rule["count"] > 0:
                    rule["count"] -= 1
                self.faults += 1
                return dict(rule)
        return None


def sigv4_problem(handler, key, secret):
    """Why the request's SigV4 signature is refused ('' if it is good), as S3 checks it."""
    auth = handler.headers.get("Authorization", "")
    if not auth:
        return "AccessDenied"
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return "SignatureDoesNotMatch"
    fields = {}
    for part in auth[len("AWS4-HMAC-SHA256 "):].split(","):
        name, _, value = part.strip().partition("=")
        fields[name] = value
    try:
        access_key, date, region, service, terminal = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        signature = fields["Signature"]
    except (KeyError, ValueError):
        return "SignatureDoesNotMatch"
    if access_key != key:
        return "InvalidAccessKeyId"
    amz_date = handler.headers.get("x-amz-date", "")
    payload = handler.headers.get("x-amz-content-sha256")
    if payload is None or "host" not in signed or "x-amz-date" not in signed:
        return "SignatureDoesNotMatch"
    path, _, query = handler.path.partition("?")
    canonical_query = "&".join(sorted(p if "=" in p else p + "=" for p in query.split("&") if p))
    canonical_headers = "".join(
        name + ":" + " ".join(handler.headers.get(name, "").split()) + "\n" for name in signed)
    canonical = "\n".join([handler.command, path, canonical_query, canonical_headers,
                           ";".join(signed), payload])
    scope = "/".join([date, region, service, terminal])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for step in (date, region, service, terminal):
        k = hmac.new(k, step.encode(), hashlib.sha256).digest()
    want = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    return "" if hmac.compare_digest(want, signature) else "SignatureDoesNotMatch"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the origin's transport expects

    def log_message(self, fmt, *args):  # quiet: the counters say what happened
        pass

    def finish(self):
        super().finish()
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()

    def do_GET(self):
        self.handle_any()

    def do_HEAD(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def control(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        state = self.server.state
        if url.path == "/__fault":
            rule = {"mode": q.get("mode", "500"), "count": int(q.get("count", "1")),
                    "match": q.get("match", ""), "method": q.get("method", "GET"),
                    "seconds": float(q.get("seconds", "1"))}
            if rule["mode"] not in ("500", "429", "slow", "truncate"):
                self.answer(400, b"unknown mode\n")
                return
            with state.lock:
                state.rules.append(rule)
            self.answer(200, b"ok\n")
        elif url.path == "/__clear":
            with state.lock:
                state.rules.clear()
            self.answer(200, b"ok\n")
        elif url.path == "/__stats":
            with state.lock:
                body = json.dumps({"requests": state.requests, "faults": state.faults,
                                   "refused": state.refused, "paths": state.paths})
            self.answer(200, body.encode(), [("Content-Type", "application/json")])
        else:
            self.answer(404, b"no such control\n")

    def upstream(self, method, body):
        """The upstream's answer: (status, headers, body); (502, [], b"") if it cannot be had."""
        # Expect: 100-continue was answered here already (http.server does it).
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in HOP_BY_HOP and k.lower() != "expect"}
        if body:
            headers["Content-Length"] = str(len(body))
        for attempt in range(2):  # a kept-alive connection the server closed: once more
            conn = getattr(self, "conn", None)
            if conn is None:
                conn = http.client.HTTPConnection(self.server.upstream_host,
                                                  self.server.upstream_port, timeout=30)
                self.conn = conn
            try:
                conn.request(method, self.path, body=body, headers=headers)
                r = conn.getresponse()
                data = r.read()
                return r.status, r.getheaders(), data
            except (OSError, http.client.HTTPException):
                conn.close()
                self.conn = None
        return 502, [], b""

    def handle_any(self):
        if self.path.startswith("/__"):
            self.control()
            return
        state = self.server.state
        length = int(self.headers.get("Content-Length", "0") or "0")
        body = self.rfile.read(length) if length > 0 else b""
        if self.server.sigv4_secret is not None:
            problem = sigv4_problem(self, self.server.sigv4_key, self.server.sigv4_secret)
            if problem:
                with state.lock:
                    state.refused += 1
                xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code>"
                       "</Error>" % problem).encode()
                self.answer(403, xml, [("Content-Type", "application/xml")])
                return
        fault = state.take_fault(self.command, urllib.parse.urlsplit(self.path).path)
        mode = fault["mode"] if fault else None
        if mode in ("500", "429"):
            extra = [("Retry-After", "0")] if mode == "429" else []
            self.answer(int(mode), b"injected fault\n", extra)
            return
        status, headers, data = self.upstream(self.command, body)
        self.send_response(status)
        for name, value in headers:
            # send_response wrote its own Date and Server.
            if name.lower() not in HOP_BY_HOP and name.lower() not in ("date", "server"):
                self.send_header(name, value)
        if self.command == "HEAD":
            # HEAD's Content-Length is the object's: passed on as the upstream sent it.
            for name, value in headers:
                if name.lower() == "content-length":
                    self.send_header(name, value)
            self.end_headers()
            return
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if mode == "truncate" and data:
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if mode == "slow" and data:
            pieces = 16
            step = (len(data) + pieces - 1) // pieces
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(fault["seconds"] / pieces)  # the fault itself: a slow body
            return
        self.wfile.write(data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT")
    p.add_argument("--port-file", required=True)
    p.add_argument("--sigv4-key")
    p.add_argument("--sigv4-secret")
    a = p.parse_args()
    up = urllib.parse.urlsplit(a.upstream)
    if up.scheme != "http" or up.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("fault_proxy: the upstream must be an http:// server on this machine")
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State()
    server.upstream_host = up.hostname
    server.upstream_port = up.port or 80
    server.sigv4_key = a.sigv4_key
    server.sigv4_secret = a.sigv4_secret
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, a.port_file)  # whole or not at all: the test reads it as soon as it appears
    server.serve_forever()


if __name__ == "__main__":
    main()
