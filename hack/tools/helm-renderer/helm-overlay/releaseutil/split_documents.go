// Copied into the renderer's copy of Helm's pkg/releaseutil by hack/lib/build-helm.sh; not built
// from this directory.

package releaseutil

import "strings"

// mooringSplitDocuments returns what sep.Split(s, -1) does, sep being manifest.go's
// (?:^|\s*\n)---\s* (RE2's \s is [\t\n\f\r ]), without the regexp: under WebAssembly the regexp
// engine tried the pattern at every byte of every rendered template, about a sixth of
// kserve-resources' render. The rules, as RE2's leftmost-first search applies them:
//   - at the start, "---" is a separator (the ^ alternative);
//   - elsewhere a separator is a "\n---", together with the run of whitespace before it back to
//     where the search starts (the last separator's end); \s* cannot cross the dashes, so the
//     first "\n---" after the search start is the leftmost match;
//   - each separator takes all the whitespace after its "---" (greedy \s*), so a "---" right
//     after it is not preceded by a newline the search can still see, and stays in the document;
//   - the pieces between separators are returned in order, the empty first one included when
//     the text starts with a separator, and "" for an empty text.
//
// The renderer's output is compared byte for byte with bin/helm, built from unchanged Helm, by
// shared/helm/test/fidelity.test.ts, including a chart made of these edge cases.
func mooringSplitDocuments(s string) []string {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	pastSpace := func(i int) int {
		for i < len(s) && space(s[i]) {
			i++
		}
		return i
	}
	var docs []string
	last := 0
	if strings.HasPrefix(s, "---") {
		docs = append(docs, "")
		last = pastSpace(3)
	}
	for {
		at := strings.Index(s[last:], "\n---")
		if at < 0 {
			break
		}
		at += last
		start := at
		for start > last && space(s[start-1]) {
			start--
		}
		docs = append(docs, s[last:start])
		last = pastSpace(at + 4)
	}
	return append(docs, s[last:])
}
