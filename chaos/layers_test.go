package chaos

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers is what each package under chaos/ may import of chaos: the data
// path runs scenario → mock → verify → the runner (this package), the
// client's process supervision sits beside it importing only the schema,
// and the run folder and redaction are leaves. The compiler forbids
// cycles; this test forbids the backward edges it would allow.
var layers = map[string][]string{
	"fault":         nil,
	"fault/example": {"fault"},
	"runfolder":     nil,
	"redact":        {"runfolder"},
	"scenario":      {"fault", "runfolder"},
	"client":        {"scenario", "fault", "runfolder"},
	"mock":          {"scenario", "fault", "client", "redact", "runfolder"},
	"fleet":         nil,
	"verify":        {"mock", "scenario", "fault", "client", "runfolder", "fleet"},
	"":              {"verify", "mock", "scenario", "fault", "client", "redact", "runfolder", "fleet"},
}

const chaosPath = "github.com/retrylab/retrylab/chaos"

func TestLayers(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		allowed, known := layers[pkg]
		if !known {
			t.Errorf("%s: package chaos/%s is not in layers; add it with what it may import", path, pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != chaosPath && !strings.HasPrefix(p, chaosPath+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(p, chaosPath), "/")
			if dep == pkg {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || dep == a
			}
			if !ok {
				t.Errorf("%s imports chaos/%s, against the data path: chaos/%s may import only %v", path, dep, pkg, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
