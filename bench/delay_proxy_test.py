#!/usr/bin/python3
"""Tests of bench/delay_proxy.py against a small HTTP/1.1 server in this process.

Run: /usr/bin/python3 bench/delay_proxy_test.py   (stdlib only; 127.0.0.1 only; a few seconds)

Ownership: each test class starts one proxy process and one server thread and stops both in
tearDownClass, even when a test fails; the proxy also dies with this process (PDEATHSIG).
Thread-safety: the server thread only answers requests; the tests run in the main thread.
"""
import ctypes
import http.client
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
import urllib.request

PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "delay_proxy.py")
BIG = 4_000_000
DELAY = 0.1
RATE = 20_000_000
BURST = 256 * 1024  # the proxy's allowance


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the S3 clients use it

    def do_GET(self):
        if self.path == "/big":
            body = b"x" * BIG
        else:  # echoes the header the proxy may add
            body = (self.headers.get("x-amz-content-sha256") or "none").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _child_setup():
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class DelayProxyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.proxy = subprocess.Popen(
            [sys.executable, PROXY, "--upstream", f"127.0.0.1:{cls.server.server_port}",
             "--delay-ms", str(DELAY * 1000), "--bandwidth", str(RATE),
             "--listen", "plain=0", "--listen", "sha=0,add-sha256"],
            stdout=subprocess.PIPE, text=True, preexec_fn=_child_setup)
        try:
            ready = json.loads(cls.proxy.stdout.readline())
        except ValueError:
            cls.tearDownClass()
            raise
        cls.control, cls.ports = ready["control"], ready["groups"]

    @classmethod
    def tearDownClass(cls):
        cls.proxy.terminate()
        try:
            cls.proxy.wait(10)
        except subprocess.TimeoutExpired:
            cls.proxy.kill()
            cls.proxy.wait()
        cls.proxy.stdout.close()
        cls.server.shutdown()
        cls.server.server_close()

    def stats(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.control}/stats", timeout=10) as r:
            return json.load(r)

    def get(self, conn, path):
        t = time.monotonic()
        conn.request("GET", path)
        body = conn.getresponse().read()
        return body, time.monotonic() - t

    def test_each_response_on_a_kept_alive_connection_is_delayed(self):
        before = self.stats()["groups"]["plain"]
        conn = http.client.HTTPConnection("127.0.0.1", self.ports["plain"], timeout=10)
        try:
            for _ in range(3):
                body, seconds = self.get(conn, "/echo")
                self.assertEqual(body, b"none")  # no header added on a plain port
                self.assertGreaterEqual(seconds, DELAY * 0.95)
        finally:
            conn.close()
        after = self.stats()["groups"]["plain"]
        self.assertEqual(after["responses"] - before["responses"], 3)
        self.assertEqual(after["connections"] - before["connections"], 1)

    def test_bandwidth_is_capped_and_bytes_are_counted(self):
        before = self.stats()["groups"]["plain"]
        conn = http.client.HTTPConnection("127.0.0.1", self.ports["plain"], timeout=10)
        try:
            body, seconds = self.get(conn, "/big")
        finally:
            conn.close()
        self.assertEqual(len(body), BIG)
        self.assertGreaterEqual(seconds, DELAY + (BIG - BURST) / RATE * 0.95)
        after = self.stats()["groups"]["plain"]
        # The body and the response's head.
        self.assertGreater(after["bytes_down"] - before["bytes_down"], BIG)
        self.assertLess(after["bytes_down"] - before["bytes_down"], BIG + 1000)

    def test_the_sha256_port_adds_the_empty_payload_hash_once(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.ports["sha"], timeout=10)
        try:
            body, _ = self.get(conn, "/echo")
            self.assertEqual(body, b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b78"
                                   b"52b855")
            # A client's own header is kept as it is.
            conn.request("GET", "/echo", headers={"x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
            self.assertEqual(conn.getresponse().read(), b"UNSIGNED-PAYLOAD")
        finally:
            conn.close()
        self.assertEqual(self.stats()["groups"]["sha"]["responses"], 2)

    def test_stats_report_the_proxy_cpu(self):
        s = self.stats()
        self.assertGreater(s["cpu_seconds"], 0)
        self.assertEqual(s["bandwidth"], RATE)


if __name__ == "__main__":
    unittest.main()
