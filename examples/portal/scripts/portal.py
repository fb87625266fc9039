"""The shipping portal's client, shared by the scripts.

This stands in for a real portal's API client. The scripts are never run in a chaos
trial: the shim answers them from the trial's twin. If one ever runs for real, it
writes a canary file (PORTAL_CANARY, else ~/.portal-canary) so a test can tell.
"""
import os
import sys
import time


def canary(script, argv):
    path = os.environ.get("PORTAL_CANARY") or os.path.expanduser("~/.portal-canary")
    with open(path, "a") as f:
        f.write("%s %s ran for real at %d\n" % (script, " ".join(argv), time.time()))


def die(msg):
    sys.stderr.write("error: %s\n" % msg)
    sys.exit(1)
