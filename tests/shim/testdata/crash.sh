#!/bin/sh
# A broken adapter: it dies on its first request, saying why on its stderr.
read -r line
echo "adapter crashed: boom" >&2
exit 3
