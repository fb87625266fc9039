#!/usr/bin/env python3
# What the benchmark runs directly: a thin client that prints one line, as a portal
# script does once it has its answer (no network).
import sys

print("%s shipment: DHL" % sys.argv[1])
