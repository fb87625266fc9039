package stdio

import "testing"

// TestWallCodexConfig checks the {codex_config} override as Codex reads it: one TOML
// key=value whose value is an inline table naming the wall's command, its arguments and
// the approval that lets codex exec call its tools; a path with quotes, backslashes or
// control characters stays one TOML string. (Codex 0.171 was run with this override,
// offline against the stand-in model: it started the wall and listed its tools.)
func TestWallCodexConfig(t *testing.T) {
	tests := []struct{ bin, hub, want string }{
		{"/usr/bin/chaos", "http://127.0.0.1:4000",
			`mcp_servers.chaos={command = "/usr/bin/chaos", args = ["wall", "--hub", "http://127.0.0.1:4000"], default_tools_approval_mode = "approve", required = true}`},
		{`/opt/my "tools"\chaos`, "http://127.0.0.1:1",
			`mcp_servers.chaos={command = "/opt/my \"tools\"\\chaos", args = ["wall", "--hub", "http://127.0.0.1:1"], default_tools_approval_mode = "approve", required = true}`},
		{"/tmp/a\tb\n", "http://127.0.0.1:1",
			`mcp_servers.chaos={command = "/tmp/a\u0009b\u000A", args = ["wall", "--hub", "http://127.0.0.1:1"], default_tools_approval_mode = "approve", required = true}`},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			if got := WallCodexConfig(tt.bin, tt.hub); got != tt.want {
				t.Errorf("WallCodexConfig(%q) =\n%s\nwant\n%s", tt.bin, got, tt.want)
			}
		})
	}
}
