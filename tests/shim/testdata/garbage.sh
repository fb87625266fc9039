#!/bin/sh
# A broken adapter: it answers a request with a line that is not the protocol's JSON.
while read -r line; do
	echo "hello, I am not JSON"
done
