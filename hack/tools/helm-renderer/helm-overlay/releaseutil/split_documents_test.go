package releaseutil

// Run with `go test ./helm-overlay/...` in hack/tools/helm-renderer (shared/helm/test/
// helm-overlay.test.ts does): the hand splitter against Helm's regexp, which hack/lib/build-helm.sh
// checks is still the one in manifest.go.

import (
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var helmSep = regexp.MustCompile("(?:^|\\s*\n)---\\s*")

var pieces = []string{"-", "--", "---", "\n", "\n---", " ", "\t", "\r", "\r\n", "\f", "a", "kind: X", "# c", "\v"}

func TestSplitsAsHelmsRegexpDoes(t *testing.T) {
	for _, s := range []string{"", "---", "\n---", "a\n---\nb", "---\n---\n", "a\n---b", " \n---  \n\n---\t\nc"} {
		check(t, s)
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		var b strings.Builder
		for n := r.Intn(12); n > 0; n-- {
			b.WriteString(pieces[r.Intn(len(pieces))])
		}
		check(t, b.String())
	}
}

func check(t *testing.T, s string) {
	t.Helper()
	if want, got := helmSep.Split(s, -1), mooringSplitDocuments(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nhelm:    %q\nmooring: %q", s, want, got)
	}
}
