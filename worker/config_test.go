package worker

import (
	"path/filepath"
	"testing"
)

func TestDefaultDataDir(t *testing.T) {
	tests := []struct {
		name, xdg, home, want string
	}{
		{"xdg", "/xdg/data", "/home/u", "/xdg/data/chaos"},
		{"home", "", "/home/u", "/home/u/.local/share/chaos"},
		{"relative xdg is ignored", "rel", "/home/u", "/home/u/.local/share/chaos"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			got, err := DefaultDataDir()
			if err != nil {
				t.Fatal(err)
			}
			if got != filepath.FromSlash(tt.want) {
				t.Fatalf("DefaultDataDir() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestServerConfigDefaults(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ServerConfig
		wantIP  string
		wantErr bool
	}{
		{"zero", ServerConfig{DataDir: "/d"}, DefaultIP, false},
		{"localhost", ServerConfig{DataDir: "/d", IP: "localhost"}, DefaultIP, false},
		{"host name", ServerConfig{DataDir: "/d", IP: "example.com"}, "", true},
		{"bad port", ServerConfig{DataDir: "/d", Port: 70000}, "", true},
		{"bad ui port", ServerConfig{DataDir: "/d", UIPort: -2}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.withDefaults()
			if (err != nil) != tt.wantErr {
				t.Fatalf("withDefaults() error = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got.IP != tt.wantIP || got.Namespace != DefaultNamespace || got.Retention != DefaultRetention {
				t.Fatalf("withDefaults() = %+v", got)
			}
		})
	}
}
