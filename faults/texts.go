package faults

// The texts the agent receives from an error fault. One copy, used by every family.
const (
	TextUnavailable  = "503 Service Unavailable: the service is temporarily unavailable"
	TextWriteFailed  = "503 Service Unavailable: the write could not be completed"
	TextSessionEnded = "401 Unauthorized: the session has ended, sign in again"
)

func message(c Condition, def string) string {
	if c.Message != "" {
		return c.Message
	}
	return def
}
