#!/usr/bin/env python3
"""Book a shipment for an order on the portal.

usage: book_shipment.py ORDER --carrier CARRIER

Each call books a new shipment (and bills it): never book the same order twice.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import portal  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("order")
p.add_argument("--carrier", required=True)
a = p.parse_args()
portal.canary("book_shipment.py", sys.argv[1:])
portal.die("the real portal is not reachable from here")
