#!/usr/bin/env python3
"""The portal's twin as an adapter (docs/shim.md, "The adapter"): chaos starts it once per
trial and writes one JSON request line per call of a script on its stdin; it answers each
with one JSON reply line on its stdout. Python standard library only.

What the declarative entries of portal.yaml cannot say, and this does: the portal checks the
carrier (an unknown one is refused with exit 3, as the real script would), and a booking
prints a tracking number made from the order and the carrier.

The faults stay chaos's: told "not_stored", it answers the success the portal would have
given (chaos drops its writes); told "stale", "current" is already the value from before the
last write. It keeps no state of its own: the twin's state comes with each request.
"""
import json
import sys

CARRIERS = ("DHL", "UPS", "FEDEX")


def book(req):
    order, carrier = req["args"].get("order", ""), req["args"].get("carrier", "")
    if carrier.upper() not in CARRIERS:
        return {"exit": 3, "stderr": "error: unknown carrier %r (the portal takes %s)\n" % (carrier, ", ".join(CARRIERS))}
    tracking = "%s-%s-0001" % (carrier.upper(), order.replace("-", ""))
    return {
        "exit": 0,
        "stdout": "booked %s with %s (tracking %s)\n" % (order, carrier, tracking),
        "writes": {req["key"]: carrier},
    }


def get(req):
    order = req["args"].get("order", "")
    current = req.get("current")
    return {"exit": 0, "stdout": "%s shipment: %s\n" % (order, current if current else "")}


SCRIPTS = {"book_shipment": book, "get_shipment": get}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        answer = SCRIPTS.get(req["script"])
        if answer is None:
            reply = {"exit": 2, "stderr": "portal twin: no script %r\n" % req["script"]}
        else:
            reply = answer(req)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
