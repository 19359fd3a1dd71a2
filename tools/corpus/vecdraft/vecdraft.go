// Package vecdraft holds what every Go corpus producer shares: the draft vector
// shape (producer, name, kind, hex; the Java reader fills in the rest), writing
// a draft as indented JSON, and reading a dependency's version from build info.
package vecdraft

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Producer records which client wrote a payload and how.
type Producer struct {
	Implementation string `json:"implementation"`
	Version        string `json:"version"`
	How            string `json:"how"`
}

// Draft is a vector before the Java reader adds canonical/expect/readers.
type Draft struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Producer    Producer `json:"producer"`
	Kind        string   `json:"kind"`
	Hex         string   `json:"hex"`
	Notes       string   `json:"notes,omitempty"`
}

// ModVersion is the version of module `path` in this binary, without the "v".
func ModVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		panic("no build info")
	}
	for _, d := range info.Deps {
		if d.Path == path {
			return strings.TrimPrefix(d.Version, "v") // "1.2.3", as the other producers write versions
		}
	}
	panic("module not in build: " + path)
}

// Emit writes d to dir/<name>.json.
func Emit(dir string, d Draft) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, d.Name+".json"), append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
}

// Str returns a pointer to s (for optional string fields of client structs).
func Str(s string) *string { return &s }
