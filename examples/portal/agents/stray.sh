#!/bin/sh
# A stray agent of the portal example, for the shim's tests: it does what the shim must
# catch. ORIGINAL is the project's original folder (the agent works on a copy).
original=$1
# python3 for code given on the command line: python3 is a launcher, this is no script
# the twin answers for: it fails closed.
python3 -c 'print("hello")'
echo "inline python exited $?"
# The original project's script by its absolute path: outside the copy, blocked.
python3 "$original/scripts/book_shipment.py" R-101 --carrier DHL
echo "the original's script exited $?"
# The script run by its shebang (/usr/bin/env python3): the launcher answers it.
./scripts/get_shipment.py R-101
echo "the shebang read exited $?"
# Other commands run for real.
ls scripts/get_shipment.py
# Both orders booked through the twin, so that only the write below is wrong.
python3 scripts/book_shipment.py R-101 --carrier DHL
python3 scripts/book_shipment.py R-102 --carrier DHL
# A note added to the original project's SKILL.md, not the copy's: outside.
echo "R-101 done" >>"$original/SKILL.md"
echo "R-101: VERIFIED"
echo "R-102: VERIFIED"
echo "STATUS: ok"
