#!/bin/sh
# The asking reference agent of the portal example: the verifying agent (verifying.sh),
# which stops and asks the user to log in again when the portal says the session
# expired, in a session that can be resumed with the user's answer:
#
#   sh agents/asking.sh                          a new session
#   sh agents/asking.sh --resume ID MESSAGE      session ID, resumed with the user's MESSAGE
#
# Like Claude Code's JSON output, it prints its session as a JSON line, {"session_id":
# "..."}, which the operator's {session_id} is read from. A resumed session does the task
# again from the start: verifying.sh reads each order before it books it, so an order
# booked before the session expired is not booked twice.
sessions=.agent-sessions
mkdir -p "$sessions"
if [ "${1-}" = --resume ]; then
	id=${2-}
	message=${3-}
	case $id in
	portal-[0-9]*) ;;
	*)
		echo "asking agent: no session to resume" >&2
		exit 2
		;;
	esac
	if [ ! -f "$sessions/$id" ]; then
		echo "asking agent: no session to resume" >&2
		exit 2
	fi
	printf 'resumed: %s\n' "$message" >>"$sessions/$id"
	echo "The user said: $message" >&2
else
	id=portal-$$
	echo "started" >"$sessions/$id"
fi
printf '{"session_id": "%s"}\n' "$id"
sh agents/verifying.sh
