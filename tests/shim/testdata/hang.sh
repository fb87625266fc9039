#!/bin/sh
# A broken adapter: it never answers. It writes its process id (and its child's) to the
# file $1, so the test can see that the process group was ended.
echo $$ >"$1"
sleep 100000 &
echo $! >>"$1"
wait
