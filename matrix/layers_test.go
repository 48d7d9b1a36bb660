package matrix

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are the module's packages the matrix package may import:
// it is pure (no runner, no mock, no process), as chaos/layers_test.go
// keeps the chaos layers.
var allowedImports = []string{"probe", "chaos/scenario", "internal/yamldiag"}

func TestLayers(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/retrylab/retrylab/"
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, mod) {
				continue
			}
			ok := false
			for _, a := range allowedImports {
				ok = ok || p == mod+a
			}
			if !ok {
				t.Errorf("%s imports %s: the matrix package may import only %v", f, p, allowedImports)
			}
		}
	}
}
