#!/usr/bin/env python3
"""The SigV4 check of tests/origin/fault_proxy.py against AWS's published S3 example.

mmfs's S3 requests are signed by libcurl (CURLOPT_AWS_SIGV4). s3rver does not verify
signatures, so the S3 tests send mmfs's requests through fault_proxy.py with --sigv4-secret,
which checks each one as S3 does (tests/origin/s3_origin_test.cc). This test pins that checker
to AWS's own worked example ("Example: GET Object" in the Amazon S3 API reference,
"Signature Calculations for the Authorization Header"): it accepts the published signature and
refuses the same request changed in any signed part, so a request that passes the proxy is
signed as AWS would sign it.
"""
import email.message
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_proxy  # noqa: E402

KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
SIGNATURE = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"


class Request:
    """What the checker reads of a request handler: command, path and headers."""

    def __init__(self, command="GET", path="/test.txt", **changes):
        self.command = command
        self.path = path
        fields = {
            "Host": "examplebucket.s3.amazonaws.com",
            "Range": "bytes=0-9",
            "x-amz-content-sha256": EMPTY_SHA256,
            "x-amz-date": "20130524T000000Z",
            "Authorization": (
                "AWS4-HMAC-SHA256 Credential=" + KEY + "/20130524/us-east-1/s3/aws4_request,"
                "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                "Signature=" + SIGNATURE),
        }
        fields.update(changes)
        self.headers = email.message.Message()  # case-insensitive, as http.server's
        for name, value in fields.items():
            self.headers[name] = value


class Sigv4VectorsTest(unittest.TestCase):
    def test_the_published_example_passes(self):
        self.assertEqual(fault_proxy.sigv4_problem(Request(), KEY, SECRET), "")

    def test_any_signed_part_changed_is_refused(self):
        for changed in (Request(path="/test.txu"), Request(command="HEAD"),
                        Request(Range="bytes=0-10"), Request(**{"x-amz-date": "20130524T000001Z"}),
                        Request(Host="otherbucket.s3.amazonaws.com")):
            self.assertEqual(fault_proxy.sigv4_problem(changed, KEY, SECRET),
                             "SignatureDoesNotMatch")
        self.assertEqual(fault_proxy.sigv4_problem(Request(), KEY, SECRET[:-1] + "X"),
                         "SignatureDoesNotMatch")

    def test_an_unknown_key_or_no_signature_is_refused(self):
        self.assertEqual(fault_proxy.sigv4_problem(Request(), "AKIDOTHER", SECRET),
                         "InvalidAccessKeyId")
        self.assertEqual(fault_proxy.sigv4_problem(Request(Authorization=""), KEY, SECRET),
                         "AccessDenied")


if __name__ == "__main__":
    unittest.main()
