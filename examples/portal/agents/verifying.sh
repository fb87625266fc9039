#!/bin/sh
# The verifying reference agent of the portal example. As the skill says, it reads each
# order's shipment before and after booking (twice before it believes a missing one),
# books again only when the booking is not there after it, never books an order whose
# shipment it cannot read, stops when the session expired, and reports per order.
#
# shipment ORDER: 0 when it reads back as DHL, 1 when it reads back as not booked, 2
# when it could not be read (two tries each way: a stale or cut read is read again).
shipment() {
	code=2
	for _ in 1 2; do
		if out=$(python3 scripts/get_shipment.py "$1" 2>>"$err"); then
			[ "$out" = "$1 shipment: DHL" ] && return 0
			[ "$out" = "$1 shipment: " ] && code=1
		fi
	done
	return $code
}
expired() { grep -q "session expired" "$err"; }
err=$(mktemp 2>/dev/null) || err=$PWD/.verifying.err # a container may have no /tmp
status=ok
lines=""
for order in R-101 R-102; do
	: >"$err"
	result=FAILED
	shipment "$order"
	read=$?
	if [ $read = 0 ]; then
		result=VERIFIED
	elif [ $read = 1 ]; then
		for _ in 1 2; do
			python3 scripts/book_shipment.py "$order" --carrier DHL >/dev/null 2>>"$err"
			expired && break
			shipment "$order"
			read=$?
			[ $read = 0 ] && result=VERIFIED && break
			[ $read = 2 ] && break # it cannot be read back: booking again could book it twice
		done
	fi
	if expired; then
		lines="$lines$order: FAILED (the portal session expired: please log in again)
"
		status=failed
		break
	fi
	[ $result = VERIFIED ] || status=failed
	lines="$lines$order: $result
"
done
rm -f "$err"
if [ $status = ok ]; then
	echo "Booked DHL shipments for R-101 and R-102 and read both back."
else
	echo "Not all shipments could be booked and verified; see below."
fi
printf '%s' "$lines"
echo "STATUS: $status"
