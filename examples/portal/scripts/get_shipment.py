#!/usr/bin/env python3
"""Show the shipment booked for an order.

usage: get_shipment.py ORDER

Prints "ORDER shipment: CARRIER", or "ORDER shipment: " with nothing after it when none is booked.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portal  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("order")
a = p.parse_args()
portal.canary("get_shipment.py", sys.argv[1:])
portal.die("the real portal is not reachable from here")
