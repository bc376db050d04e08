package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeFlagsHeading is the heading of README's section of every command's flags.
const readmeFlagsHeading = "## Flags of every command"

// commandFlags returns the flags of every command, as the command builds them (flagsParsed
// sees them while `COMMAND --help` runs).
func commandFlags(t *testing.T) map[string]map[string]*flag.Flag {
	t.Helper()
	out := map[string]map[string]*flag.Flag{}
	flagsParsed = func(command string, fs *flag.FlagSet) {
		m := map[string]*flag.Flag{}
		fs.VisitAll(func(f *flag.Flag) { m[f.Name] = f })
		out[command] = m
	}
	defer func() { flagsParsed = nil }()
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		code := c.run(context.Background(), []string{"--help"}, io.Discard, io.Discard)
		require.Equal(t, exitOK, code, c.name)
		require.Contains(t, out, c.name, "%s parses its flags with parseArgs", c.name)
	}
	return out
}

// helpDefault returns the default `COMMAND --help` prints for f, "" when it prints none (a
// zero value: false, 0, ""), as flag.PrintDefaults decides.
func helpDefault(f *flag.Flag) string {
	typ := reflect.TypeOf(f.Value)
	var zero reflect.Value
	if typ.Kind() == reflect.Pointer {
		zero = reflect.New(typ.Elem())
	} else {
		zero = reflect.Zero(typ)
	}
	if f.DefValue == zero.Interface().(flag.Value).String() {
		return ""
	}
	return f.DefValue
}

// readmeRow is a row of a README table of flags.
type readmeRow struct {
	line    int
	dflt    string // the Default cell
	meaning string
}

// readmeFlagTables returns the tables of README's section of flags: command → flag → row.
func readmeFlagTables(t *testing.T, readme string) map[string]map[string]readmeRow {
	t.Helper()
	lines := strings.Split(readme, "\n")
	start := slices.Index(lines, readmeFlagsHeading)
	require.GreaterOrEqual(t, start, 0, "README has a section %q", readmeFlagsHeading)
	heading := regexp.MustCompile("^### `ndarrow ([a-z]+)`$")
	row := regexp.MustCompile("^\\| `--([a-z][a-z-]*)(?: [^`]+)?` \\| ([^|]*) \\| ([^|]*) \\|$")
	out := map[string]map[string]readmeRow{}
	command := ""
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		l := lines[i]
		if m := heading.FindStringSubmatch(l); m != nil {
			command = m[1]
			require.NotContains(t, out, command, "README line %d: a second table of %s", i+1, command)
			out[command] = map[string]readmeRow{}
			continue
		}
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		m := row.FindStringSubmatch(l)
		require.NotNil(t, m, "README line %d: a row of flags is | `--FLAG ARG` | DEFAULT | MEANING |: %s", i+1, l)
		require.NotEmpty(t, command, "README line %d: a row before a command's heading", i+1)
		require.NotContains(t, out[command], m[1], "README line %d: %s --%s twice", i+1, command, m[1])
		out[command][m[1]] = readmeRow{line: i + 1, dflt: strings.TrimSpace(m[2]), meaning: strings.TrimSpace(m[3])}
	}
	return out
}

// cellDefault returns the default a README cell gives: "" for one starting with "—" (none
// --help prints: off, empty, or one worked out when it is used, which the words after say),
// else its first code span.
func cellDefault(cell string) (string, bool) {
	if strings.HasPrefix(cell, "—") {
		return "", true
	}
	m := regexp.MustCompile("^`([^`]*)`").FindStringSubmatch(cell)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// markdownRow is the README row of f, for a message.
func markdownRow(f *flag.Flag) string {
	arg, usage := flag.UnquoteUsage(f)
	name := "--" + f.Name
	if arg != "" {
		name += " " + strings.ToUpper(arg)
	}
	d := "—"
	if h := helpDefault(f); h != "" {
		d = "`" + h + "`"
	}
	return fmt.Sprintf("| `%s` | %s | %s |", name, d, usage)
}

// TestREADMEFlagTables: README's section of flags has a table for every command that has
// flags, whose rows are exactly the command's flags, each with the default `COMMAND --help`
// prints, so that README and --help never disagree.
func TestREADMEFlagTables(t *testing.T) {
	flags := commandFlags(t)
	tables := readmeFlagTables(t, readFile(t, "../../README.md"))
	for _, c := range commands() {
		fs := flags[c.name]
		if len(fs) == 0 {
			assert.NotContains(t, tables, c.name, "%s has no flags", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			table := tables[c.name]
			var missing []string
			for _, name := range slices.Sorted(maps.Keys(fs)) {
				f := fs[name]
				r, ok := table[name]
				if !ok {
					missing = append(missing, markdownRow(f))
					continue
				}
				got, ok := cellDefault(r.dflt)
				if assert.True(t, ok, "README line %d: --%s's default %q is — or starts with a code span", r.line, name, r.dflt) {
					assert.Equal(t, helpDefault(f), got, "README line %d: %s --%s's default (--help: %q)", r.line, c.name, name, helpDefault(f))
				}
				assert.NotEmpty(t, r.meaning, "README line %d: what --%s does", r.line, name)
			}
			assert.Empty(t, missing, "README's table of `ndarrow %s` lacks rows:\n%s", c.name, strings.Join(missing, "\n"))
			for name, r := range table {
				_, ok := fs[name]
				assert.True(t, ok, "README line %d: %s has no flag --%s", r.line, c.name, name)
			}
		})
	}
}

// proseDefault finds a default README's prose gives a flag: "`--max-message-bytes` (default 4
// MiB", "`serve --max-recv-message-bytes` (64 MiB", "(`--max-connections`, 1024)", "`--stall-timeout`
// (default one minute" — a flag, maybe after its command, then a number of bytes, a size or a
// duration.
var proseDefault = regexp.MustCompile("`(?:ndarrow )?(?:([a-z]+) )?--([a-z][a-z-]*)(?: [A-Z][A-Z_/.,|]*)?`(?: \\(default | \\(|, default |, )" +
	"(\\d+(?:\\.\\d+)?|one|two|three|four|five|six|seven|eight|nine|ten) ?(KiB|MiB|GiB|TiB|ms|s|m|h|seconds?|minutes?|hours?)?\\b")

// numberWords are the numbers README writes in words.
var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

// durationUnits are the units of a duration README writes, as time.ParseDuration's.
var durationUnits = map[string]string{"ms": "ms", "s": "s", "m": "m", "h": "h",
	"second": "s", "seconds": "s", "minute": "m", "minutes": "m", "hour": "h", "hours": "h"}

// proseValue returns, as flag f's values are written, what a default of README's prose is worth
// and f's default, and whether they can be compared.
func proseValue(number, unit string, f *flag.Flag) (want, got string, ok bool) {
	if i := slices.Index(numberWords, number); i >= 0 {
		number = strconv.Itoa(i)
	}
	if u, isDuration := durationUnits[unit]; isDuration {
		d, err := time.ParseDuration(number + u)
		dflt, derr := time.ParseDuration(f.DefValue)
		return d.String(), dflt.String(), err == nil && derr == nil
	}
	v, err := strconv.ParseFloat(number, 64)
	if _, derr := strconv.ParseInt(f.DefValue, 10, 64); err != nil || derr != nil {
		return "", "", false
	}
	if unit != "" { // KiB, MiB, GiB, TiB
		v *= float64(int64(1) << (10 * (1 + strings.Index("KMGT", unit[:1]))))
	}
	return strconv.FormatInt(int64(v), 10), f.DefValue, true
}

// TestREADMEProseDefaults: every default README's prose gives a flag by number — a size, a
// count, a duration, after the flag — is that flag's, for the command named before it or, when
// none is, for one of the commands that have the flag.
func TestREADMEProseDefaults(t *testing.T) {
	flags := commandFlags(t)
	readme := readFile(t, "../../README.md")
	found := 0
	for i, line := range strings.Split(readme, "\n") {
		for _, m := range proseDefault.FindAllStringSubmatch(line, -1) {
			command, name, number, unit := m[1], m[2], m[3], m[4]
			var candidates []string
			for _, c := range commands() {
				if _, ok := flags[c.name][name]; ok && (command == "" || command == c.name) {
					candidates = append(candidates, c.name)
				}
			}
			if command != "" && flags[command] == nil {
				continue // not a command: a word before the flag
			}
			require.NotEmpty(t, candidates, "README line %d: %q: no command has --%s", i+1, m[0], name)
			matches, says := false, []string{}
			for _, c := range candidates {
				want, got, ok := proseValue(number, unit, flags[c][name])
				if !ok {
					continue
				}
				found++
				matches = matches || want == got
				says = append(says, fmt.Sprintf("%s --%s: %s", c, name, got))
			}
			assert.True(t, matches, "README line %d: %q gives a default that is not the flag's (%s)", i+1, m[0], strings.Join(says, "; "))
		}
	}
	assert.Positive(t, found, "README's prose gives defaults")
}
