#!/bin/sh
# The blind reference agent of the portal example: it books each order with the skill's
# script, tries once more when the script fails, never reads anything back, and says done.
# Given the task as $1 (sh agents/blind.sh {task}), it skips the orders its line
# "Already done, do not redo: R-101" names (chaos run --branch, docs/shim.md).
skip=$(printf '%s\n' "$1" | sed -n 's/^Already done, do not redo: //p' | tr ',' ' ')
for order in R-101 R-102; do
	case " $skip " in *" $order "*) continue ;; esac
	if ! python3 scripts/book_shipment.py "$order" --carrier DHL >/dev/null 2>&1; then
		python3 scripts/book_shipment.py "$order" --carrier DHL >/dev/null 2>&1
	fi
done
echo "Booked DHL shipments for R-101 and R-102."
echo "R-101: VERIFIED"
echo "R-102: VERIFIED"
echo "STATUS: ok"
