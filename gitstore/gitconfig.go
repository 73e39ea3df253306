package gitstore

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/strata-dev/strata/gitperm"
	"github.com/strata-dev/strata/state"
)

// ignoreSettings are the settings of git's configuration that decide what
// it ignores, and which attributes it gives a path, beyond the ignore and
// attribute files themselves.
type ignoreSettings struct {
	excludesFile   string // core.excludesFile, "" when unset
	attributesFile string // core.attributesFile, "" when unset
	ignoreCase     bool   // core.ignorecase
	// presentNotSkipped is core.sparseCheckout true with
	// sparse.expectFilesOutsideOfPatterns false: git then clears the
	// skip-worktree bit of an entry whose file is in the work tree as it
	// reads the index (Ignores.Hidden).
	presentNotSkipped bool
	// unread says why git's rules cannot be read as git reads them (a
	// value git fails to expand, "~nobody/ignore", where git itself stops
	// with "failed to expand user dir"): every file git does not track is
	// then private (Ignores.Unread). "" when they can.
	unread string
}

// readIgnoreSettings reads core.excludesFile, core.attributesFile,
// core.ignorecase, core.sparseCheckout and sparse.expectFilesOutsideOfPatterns
// as git does (readConfig, the repository's config and config.worktree
// included). Not read:
// hasconfig: conditions (never met here), and `git -c`
// settings ($GIT_CONFIG_PARAMETERS); sync asks git itself before it
// publishes anything (Store.CheckIgnore, Store.CheckFilter), so what this
// misreads is at worst recorded locally, never pushed.
//
// A store reads them once (ruleSettings), for its Ignores and Attributes
// alike and for every fresh pair a watcher asks for: the rule files are
// read again, git's configuration is not (as .strata.yaml, a watcher reads
// it at start).
func readIgnoreSettings(gitDir, linkGit, commonDir string) ignoreSettings {
	var set ignoreSettings
	sparse, expectOutside := false, false
	r := readConfig(gitDir, linkGit, commonDir, false, func(sec, sub, key, val string, hasVal bool, r *configReader) {
		switch {
		case sec == "core" && sub == "" && key == "excludesfile" && hasVal:
			set.excludesFile = r.pathname("core.excludesFile", val)
		case sec == "core" && sub == "" && key == "attributesfile" && hasVal:
			set.attributesFile = r.pathname("core.attributesFile", val)
		case sec == "core" && sub == "" && key == "ignorecase":
			set.ignoreCase = r.bool("core.ignorecase", val, hasVal)
		case sec == "core" && sub == "" && key == "sparsecheckout":
			sparse = r.bool("core.sparsecheckout", val, hasVal)
		case sec == "sparse" && sub == "" && key == "expectfilesoutsideofpatterns":
			expectOutside = r.bool("sparse.expectfilesoutsideofpatterns", val, hasVal)
		}
	})
	set.presentNotSkipped = sparse && !expectOutside
	set.unread = r.unread
	return set
}

// readShared reads core.sharedRepository as git does (readConfig, the
// repository's config included): the last value wins. A value git would
// refuse is taken as unset ("umask"): git itself refuses to run there.
func readShared(gitDir, linkGit, commonDir string) gitperm.Shared {
	val, hasVal, found := "", false, false
	readConfig(gitDir, linkGit, commonDir, false, func(sec, sub, key, v string, has bool, _ *configReader) {
		if sec == "core" && sub == "" && key == "sharedrepository" {
			val, hasVal, found = v, has, true
		}
	})
	if !found {
		return gitperm.Umask
	}
	sh, err := gitperm.Parse(val, hasVal)
	if err != nil {
		return gitperm.Umask
	}
	return sh
}

// readSafeDirectories reads safe.directory as git 2.39 reads it for its
// ownership check (read_very_early_config): from the system and global
// files and the environment ($GIT_CONFIG_COUNT, $GIT_CONFIG_PARAMETERS),
// never from the repository's own config, which whoever owns the
// repository wrote. An empty value (or the key without a value) empties
// the list; "~/" is the home directory.
func readSafeDirectories() []string {
	var dirs []string
	readConfig("", "", "", true, func(sec, sub, key, val string, hasVal bool, r *configReader) {
		if sec != "safe" || sub != "" || key != "directory" {
			return
		}
		if !hasVal || val == "" {
			dirs = nil
			return
		}
		if val != "*" {
			val = r.expand(val)
		}
		dirs = append(dirs, val)
	})
	return dirs
}

// readConfig calls take with each variable of git's configuration, in the
// order git reads them, later winning: the system file ($GIT_CONFIG_SYSTEM,
// else /etc/gitconfig; none with $GIT_CONFIG_NOSYSTEM), the global ones
// ($GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config and ~/.gitconfig),
// the repository's config and, when its extensions.worktreeConfig is true,
// the worktree's config.worktree (unless early, as git's very early config
// for its ownership check; `git sparse-checkout` writes core.sparseCheckout
// there), then $GIT_CONFIG_COUNT's GIT_CONFIG_KEY_n pairs,
// and when early also $GIT_CONFIG_PARAMETERS (`git -c`, which git passes
// on to the hooks it runs). [include] path and [includeIf] with a gitdir:,
// gitdir/i: or onbranch: condition are read where they stand (at most 10
// deep, as git); with no git directory (early) no condition holds. A
// gitdir: condition is matched, as git does, against gitDir's real path and
// against linkGit, the name git found it by through a symbolic link ("" when
// none: linkdir.go). It returns the reader, whose unread says why what it
// read is not what git reads (an include.path git fails to expand: git
// refuses to run then).
func readConfig(gitDir, linkGit, commonDir string, early bool, take func(sec, sub, key, val string, hasVal bool, r *configReader)) *configReader {
	return readConfigAs(gitDir, linkGit, commonDir, early, false, take)
}

// readConfigAs is readConfig; with noHasconfig, no hasconfig: condition
// holds (the first pass that collects the remotes' URLs, as git's).
func readConfigAs(gitDir, linkGit, commonDir string, early, noHasconfig bool, take func(sec, sub, key, val string, hasVal bool, r *configReader)) *configReader {
	home, _ := os.UserHomeDir()
	r := &configReader{gitDir: gitDir, linkGit: linkGit, commonDir: commonDir, early: early, noHasconfig: noHasconfig, home: home, take: take}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		sys := "/etc/gitconfig"
		if v, ok := os.LookupEnv("GIT_CONFIG_SYSTEM"); ok {
			sys = v
		}
		r.file(sys, 0)
	}
	if v, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		r.file(v, 0)
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			r.file(filepath.Join(xdg, "git", "config"), 0)
		}
		if home != "" {
			r.file(filepath.Join(home, ".gitconfig"), 0)
		}
	}
	if !early {
		r.file(filepath.Join(commonDir, "config"), 0)
		if worktreeConfigOn(commonDir) {
			r.file(filepath.Join(gitDir, "config.worktree"), 0)
		}
	}
	if n, err := strconv.Atoi(os.Getenv("GIT_CONFIG_COUNT")); err == nil {
		for i := 0; i < n; i++ {
			r.envSetting(os.Getenv("GIT_CONFIG_KEY_"+strconv.Itoa(i)), os.Getenv("GIT_CONFIG_VALUE_"+strconv.Itoa(i)), true)
		}
	}
	if early {
		for _, kv := range parseConfigParameters(os.Getenv("GIT_CONFIG_PARAMETERS")) {
			r.envSetting(kv.key, kv.val, kv.hasVal)
		}
	}
	return r
}

// configReader follows git's configuration files and their includes.
type configReader struct {
	gitDir    string
	linkGit   string // gitDir as git names it before resolving links, or "" (Store.linkGit)
	commonDir string
	early     bool
	home      string
	// noHasconfig: no hasconfig: condition holds (remoteURLs' own pass);
	// urls, once read, are the remotes' URLs those conditions match
	noHasconfig bool
	urls        []string
	urlsRead    bool
	unread      string // why the rules read are not git's: a pathname git fails to expand (pathname)
	take        func(sec, sub, key, val string, hasVal bool, r *configReader)
}

// file reads one configuration file; a missing or unreadable one is empty.
func (r *configReader) file(name string, depth int) {
	if name == "" || depth > 10 {
		return
	}
	data, err := state.ReadRegular(name, 0, true)
	if err != nil {
		return
	}
	parseConfig(string(data), func(sec, sub, key, val string, hasVal bool) {
		r.setting(sec, sub, key, val, hasVal, name, depth)
	})
}

// envSetting takes a variable given in the environment as
// "section[.subsection].key".
func (r *configReader) envSetting(name, val string, hasVal bool) {
	first, rest, ok := strings.Cut(name, ".")
	if !ok {
		return
	}
	sub, key := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, key = rest[:i], rest[i+1:]
	}
	r.setting(strings.ToLower(first), sub, strings.ToLower(key), val, hasVal, "", 0)
}

// setting takes one variable of the file from (section and key lowercase).
func (r *configReader) setting(sec, sub, key, val string, hasVal bool, from string, depth int) {
	if key == "path" && hasVal && (sec == "include" && sub == "" || sec == "includeif" && r.met(sub, from)) {
		p := r.pathname("include.path", val)
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			if from == "" {
				return // git refuses a relative include given outside a file ("relative config includes must come from files")
			}
			p = filepath.Join(filepath.Dir(from), p)
		}
		// an absolute one given in the environment ($GIT_CONFIG_COUNT) is
		// followed, as git follows it (attack40d F5: it was not)
		r.file(p, depth+1)
		return
	}
	r.take(sec, sub, key, val, hasVal, r)
}

// pathname is the value val of the pathname variable key, interpolated
// (interpolatePath); when git fails to expand it, and so refuses to run
// (git_config_pathname: "failed to expand user dir"), "", and the reader
// notes why the rules it reads are unread.
func (r *configReader) pathname(key, val string) string {
	p, err := interpolatePath(val, r.home)
	if err != nil {
		if r.unread == "" {
			r.unread = key + " " + state.TermSafe(val) + ": " + err.Error()
		}
		return ""
	}
	return p
}

// bool is the boolean variable key's value val (gitBool); when git refuses
// it, and so refuses to run (git_config_bool: "bad boolean config value"),
// false, and the reader notes why the rules it reads are unread, as for a
// pathname git fails to expand. (One in the repository's config is refused
// before: checkFormat.)
func (r *configReader) bool(key, val string, hasVal bool) bool {
	b, ok := gitBool(val, hasVal)
	if !ok && r.unread == "" {
		r.unread = key + " " + strconv.Quote(val) + ": not a boolean git reads (git refuses it too: \"bad boolean config value\")"
	}
	return b
}

// expand is p interpolated (interpolatePath), or p itself when git fails
// to expand it.
func (r *configReader) expand(p string) string {
	if x, err := interpolatePath(p, r.home); err == nil {
		return x
	}
	return p
}

// interpolatePath expands a leading "~" of a pathname value as git's
// interpolate_path does: "~" or "~/…" is home ($HOME), "~USER" or
// "~USER/…" that user's home directory in the password database (os/user:
// /etc/passwd when built without cgo). It fails, as git does, with no
// $HOME or no such user.
func interpolatePath(p, home string) (string, error) {
	name, ok := strings.CutPrefix(p, "~")
	if !ok {
		return p, nil
	}
	rest := ""
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name, rest = name[:i], name[i:]
	}
	if name == "" {
		if home == "" {
			return "", errors.New("$HOME is not set")
		}
		return home + rest, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return "", fmt.Errorf("no user %s", state.TermSafe(name))
	}
	return u.HomeDir + rest, nil
}

// met reports whether an includeIf condition holds for this repository.
func (r *configReader) met(cond, from string) bool {
	kind, pat, ok := strings.Cut(cond, ":")
	if !ok || pat == "" || r.gitDir == "" {
		return false
	}
	switch kind {
	case "gitdir", "gitdir/i":
		// "~/" is the real path of $HOME here (interpolate_path(…, 1)); a
		// pattern git fails to expand stays as written
		home := r.home
		if real, err := filepath.EvalSymlinks(home); err == nil {
			home = real
		}
		if x, err := interpolatePath(pat, home); err == nil {
			pat = x
		}
		if rest, ok := strings.CutPrefix(pat, "./"); ok {
			// the folder of the including file's real path: a
			// ~/.gitconfig that is a link into a dotfiles folder is
			// taken from there, as git takes it
			pat = filepath.Dir(evalSymlinks(from)) + "/" + rest
		}
		if !strings.HasPrefix(pat, "/") {
			pat = "**/" + pat
		}
		if strings.HasSuffix(pat, "/") {
			pat += "**"
		}
		// the real path, then the name git found it by (include_by_gitdir)
		dirs := []string{filepath.ToSlash(r.gitDir)}
		if real, err := filepath.EvalSymlinks(r.gitDir); err == nil {
			dirs[0] = filepath.ToSlash(real)
		}
		if r.linkGit != "" {
			dirs = append(dirs, filepath.ToSlash(r.linkGit))
		}
		for _, d := range dirs {
			if wildmatch(pat, strings.TrimSuffix(d, "/"), true, kind == "gitdir/i") {
				return true
			}
		}
	case "hasconfig":
		// hasconfig:remote.*.url:GLOB, the only one git 2.39 knows: any
		// remote URL of the configuration, read first without these
		// conditions (as git's first pass), matched as git does
		// (wildmatch with WM_PATHNAME); before, a file ignored only
		// through such an include was recorded here and then refused by
		// every sync (attack37, attack40c L3)
		glob, ok := strings.CutPrefix(pat, "remote.*.url:")
		if !ok || r.noHasconfig {
			return false
		}
		for _, u := range r.remoteURLs() {
			if wildmatch(glob, u, true, false) {
				return true
			}
		}
	case "onbranch":
		// HEAD read as git reads it ("ref:refs/heads/main" too)
		ref, _ := readHeadFile(filepath.Join(r.gitDir, "HEAD"))
		branch, ok := strings.CutPrefix(ref, "refs/heads/")
		if !ok {
			return false
		}
		if strings.HasSuffix(pat, "/") {
			pat += "**"
		}
		return wildmatch(pat, branch, true, false)
	}
	return false
}

// remoteURLs is every remote.NAME.url value of the configuration, read
// once, without hasconfig: conditions.
func (r *configReader) remoteURLs() []string {
	if !r.urlsRead {
		r.urlsRead = true
		readConfigAs(r.gitDir, r.linkGit, r.commonDir, r.early, true, func(sec, sub, key, val string, hasVal bool, _ *configReader) {
			if sec == "remote" && sub != "" && key == "url" && hasVal {
				r.urls = append(r.urls, val)
			}
		})
	}
	return r.urls
}

// gitBool reads a boolean value of git's configuration as git does
// (git_config_bool): a key with no value is true, else parseGitBool reads
// it ("0x1", "1k" and "010" are true). ok is false for a value git refuses
// ("bad boolean config value", " true", "maybe"), on which git dies: each
// caller refuses it, or treats it as the rules unread, rather than read it
// as false.
func gitBool(v string, hasVal bool) (b, ok bool) {
	if !hasVal {
		return true, true
	}
	return parseGitBool(v)
}

// boolError is a boolean of the repository's config (file) git refuses,
// as a *FormatError: git dies on it in every command.
func boolError(file, key, val string) *FormatError {
	return &FormatError{
		Msg: fmt.Sprintf("%s: %s %q is not a boolean git reads (git refuses it too: \"bad boolean config value\"); nothing was written", file, key, val),
		Fix: fmt.Sprintf("git config %s true (or false), or remove it: git refuses to run under any other value", key),
	}
}

// parseGitBool reads v as git 2.39's git_parse_maybe_bool does, the reading
// behind git_config_bool and git_env_bool: "" is false; true, yes and on,
// false, no and off are themselves in any case (ASCII only, as strcasecmp),
// with nothing around them; else v must be an integer as parseGitInt reads
// it, true when not 0. ok is false for any other value, which git refuses
// with "bad boolean config value".
func parseGitBool(v string) (val, ok bool) {
	switch {
	case v == "":
		return false, true
	case asciiEqualFold(v, "true"), asciiEqualFold(v, "yes"), asciiEqualFold(v, "on"):
		return true, true
	case asciiEqualFold(v, "false"), asciiEqualFold(v, "no"), asciiEqualFold(v, "off"):
		return false, true
	}
	n, ok := parseGitInt(v)
	return n != 0, ok
}

// parseGitInt reads v as git 2.39's git_parse_int does (git_parse_signed
// with an int's bound): strtoimax with base 0, so white space (" \t\n\v\f\r")
// may come first, then a sign, then decimal digits, octal ones after a
// leading 0 ("010" is 8, "08" is refused) or hexadecimal ones after 0x or
// 0X; then, ending v, nothing or one unit k, m or g in either case (times
// 1024, 1024² or 1024³). At least one digit must be read ("k" and "0x" alone
// are refused, "0k" is 0), and the value times its unit must lie within
// ±2147483647. ok is false for anything else.
func parseGitInt(v string) (n int64, ok bool) {
	const limit = 1<<31 - 1
	i := 0
	for i < len(v) && strings.IndexByte(" \t\n\v\f\r", v[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(v) && v[i] == '0' && v[i+1]|0x20 == 'x' && digitValue(v[i+2]) < 16:
		base, i = 16, i+2
	case i < len(v) && v[i] == '0':
		base = 8
	}
	start := i
	var mag uint64
	for ; i < len(v) && digitValue(v[i]) < base; i++ {
		if mag <= limit { // past it the value is refused: stop growing
			mag = mag*base + digitValue(v[i])
		}
	}
	if i == start {
		return 0, false
	}
	var unit uint64
	switch rest := v[i:]; {
	case rest == "":
		unit = 1
	case asciiEqualFold(rest, "k"):
		unit = 1 << 10
	case asciiEqualFold(rest, "m"):
		unit = 1 << 20
	case asciiEqualFold(rest, "g"):
		unit = 1 << 30
	default:
		return 0, false
	}
	if mag > limit || mag*unit > limit {
		return 0, false
	}
	n = int64(mag * unit)
	if neg {
		n = -n
	}
	return n, true
}

// digitValue is c's value as a digit of base up to 36; 36 for none.
func digitValue(c byte) uint64 {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'z':
		return uint64(c|0x20-'a') + 10
	}
	return 36
}

// asciiEqualFold is strcasecmp(a, b) == 0 in the C locale: only ASCII
// letters fold (strings.EqualFold takes "K" for "k").
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// parseConfig calls visit for each variable of a git configuration file, in
// order: section and key lowercased, the subsection as written ("" for none;
// the old [section.sub] form lowercased), the value with quotes and escapes
// resolved, and whether there was a value ("key" alone means true). Lines
// it cannot read are skipped.
func parseConfig(data string, visit func(sec, sub, key, val string, hasVal bool)) {
	sec, sub := "", ""
	data = strings.TrimPrefix(data, "\xef\xbb\xbf") // a UTF-8 BOM, which git skips
	lines := strings.Split(strings.ReplaceAll(data, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t")
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if q := strings.IndexByte(line, '"'); q >= 0 && q < end {
				end = q + 1 + closingQuote(line[q+1:])
				end += strings.IndexByte(line[end:], ']')
			}
			if end <= 0 {
				sec = ""
				continue
			}
			head := strings.TrimSpace(line[1:end])
			sec, sub = head, ""
			if name, rest, ok := strings.Cut(head, " "); ok {
				sec, sub = name, unquote(strings.TrimSpace(rest))
			} else if name, rest, ok := strings.Cut(head, "."); ok {
				sec, sub = name, strings.ToLower(rest)
			}
			sec = strings.ToLower(sec)
			line = strings.TrimLeft(line[end+1:], " \t")
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		if sec == "" {
			continue
		}
		key, val, hasVal := line, "", false
		if k, v, ok := strings.Cut(line, "="); ok {
			key, val, hasVal = k, v, true
			for strings.HasSuffix(strings.TrimRight(val, " \t"), `\`) && !strings.HasSuffix(strings.TrimRight(val, " \t"), `\\`) && i+1 < len(lines) {
				val = strings.TrimSuffix(strings.TrimRight(val, " \t"), `\`) + lines[i+1]
				i++
			}
		}
		key = strings.ToLower(strings.TrimSpace(strings.Fields(key + " ")[0]))
		visit(sec, sub, key, configValue(val), hasVal)
	}
}

// closingQuote is the index of the quote closing s (which follows an
// opening one), past escapes; len(s) when none does.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(s)
}

// unquote resolves a subsection's quotes and backslashes.
func unquote(s string) string {
	s = strings.TrimPrefix(s, `"`)
	s = s[:closingQuote(s)]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// configValue resolves a value's quotes, escapes and comments; spaces
// outside quotes are trimmed at both ends.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	pending := "" // spaces kept only when something follows
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
			continue
		case !quoted && (c == '#' || c == ';'):
			return b.String()
		case !quoted && (c == ' ' || c == '\t'):
			if b.Len() > 0 {
				pending += string(c)
			}
			continue
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			default:
				c = v[i]
			}
		}
		b.WriteString(pending)
		pending = ""
		b.WriteByte(c)
	}
	return b.String()
}

// configParameter is one variable of $GIT_CONFIG_PARAMETERS.
type configParameter struct {
	key, val string
	hasVal   bool
}

// parseConfigParameters reads $GIT_CONFIG_PARAMETERS, where git puts its
// `-c` settings for the processes it starts: shell-quoted words separated
// by spaces, each 'key'='value', 'key'= (no value) or the older
// 'key=value'. What does not parse ends the list (git refuses to run).
func parseConfigParameters(env string) []configParameter {
	var out []configParameter
	cur := strings.TrimLeft(env, " \t\n")
	for cur != "" {
		key, rest, ok := sqWord(cur)
		if !ok {
			return out
		}
		switch {
		case rest == "" || strings.ContainsRune(" \t\n", rune(rest[0])):
			k, v, has := strings.Cut(key, "=")
			out = append(out, configParameter{k, v, has})
		case rest[0] == '=':
			rest = rest[1:]
			switch {
			case rest != "" && rest[0] == '\'':
				var v string
				if v, rest, ok = sqWord(rest); !ok || rest != "" && !strings.ContainsRune(" \t\n", rune(rest[0])) {
					return out
				}
				out = append(out, configParameter{key, v, true})
			case rest == "" || strings.ContainsRune(" \t\n", rune(rest[0])):
				out = append(out, configParameter{key, "", false})
			default:
				return out
			}
		default:
			return out
		}
		cur = strings.TrimLeft(rest, " \t\n")
	}
	return out
}

// sqWord reads one word quoted as git's sq_quote writes it: between single
// quotes, a quote or "!" inside written as four characters (quote,
// backslash, the character, quote).
func sqWord(s string) (word, rest string, ok bool) {
	if s == "" || s[0] != '\'' {
		return "", s, false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 < len(s) && s[i+1] == '\\' && (s[i+2] == '\'' || s[i+2] == '!') && s[i+3] == '\'' {
			b.WriteByte(s[i+2])
			i += 3
			continue
		}
		return b.String(), s[i+1:], true
	}
	return "", s, false
}

// ruleSettings is readIgnoreSettings for this store, read on first use
// and again after ForgetConfig.
func (s *Store) ruleSettings() ignoreSettings {
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if !s.rulesRead {
		s.rules, s.rulesRead = readIgnoreSettings(s.gitDir, s.linkGit, s.commonDir), true
	}
	return s.rules
}

// ForgetConfig makes the next ruleSettings and Settings read git's
// configuration again: a watcher forgets at each batch, so that
// core.excludesFile, core.attributesFile or strata.keepPrivate set or
// unset while it runs takes effect at once, as an edited .gitignore does
// (attack32 H2: unsetting strata.keepPrivate left an ignored file kept, and
// watch --sync pushed its next version).
func (s *Store) ForgetConfig() {
	s.configMu.Lock()
	s.rulesRead, s.settingsRead = false, false
	s.configMu.Unlock()
}

// Settings are strata's own settings in git's configuration, which only
// the user writes (a clone brings none): what a committed .strata.yaml,
// which anyone who can push may have written, is not trusted to decide.
type Settings struct {
	// KeepPrivate lists repo-relative paths (strata.keepPrivate, one value
	// each) that are kept even though they are private: git ignores or
	// filters them, or they are *.local.json files.
	KeepPrivate []string
	// KeepValues are the same values as the user wrote them, each beside
	// the path it names (KeepPrivate's entry), so that doctor can name a
	// value that names no file.
	KeepValues []KeepValue
	// SyncHome is strata.syncHome: nil when unset.
	SyncHome *bool
}

// KeepValue is one strata.keepPrivate value: Value as git config holds it,
// Path the repo-relative path it names (keepPath), or Value itself when it
// names no path of the work tree.
type KeepValue struct {
	Value string
	Path  string
}

// keepPath is a strata.keepPrivate value as the repo-relative path it
// names: "./config/a.yml", "config//a.yml" and an absolute path inside the
// work tree (root, symlinks resolved, or the path as the shell printed it
// when it resolves there) name config/a.yml, as a user typing them means;
// git config keeps what they typed. Any other value is kept as written
// (it names no kept path).
func keepPath(root, val string) string {
	if filepath.IsAbs(val) {
		for _, p := range []string{val, evalSymlinks(val)} {
			if rel, err := filepath.Rel(root, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
		return val
	}
	if c := path.Clean(val); c != "." && !strings.HasPrefix(c, "../") && c != ".." {
		return c
	}
	return val
}

// evalSymlinks is p with the symbolic links of its longest existing
// prefix resolved (the file it names need not exist yet), or p.
func evalSymlinks(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// Settings reads strata.keepPrivate and strata.syncHome as git reads its
// configuration (readConfig: system, global, the repository's own, then
// $GIT_CONFIG_COUNT's), once per store and again after ForgetConfig. An empty strata.keepPrivate value
// empties the list, as git's multi-valued settings do.
func (s *Store) Settings() Settings {
	s.configMu.Lock()
	defer s.configMu.Unlock()
	if !s.settingsRead {
		s.settings, s.settingsRead = Settings{}, true
		readConfig(s.gitDir, s.linkGit, s.commonDir, false, func(sec, sub, key, val string, hasVal bool, _ *configReader) {
			if sec != "strata" || sub != "" {
				return
			}
			switch key {
			case "keepprivate":
				if !hasVal || val == "" {
					s.settings.KeepPrivate, s.settings.KeepValues = nil, nil
					return
				}
				p := keepPath(s.root, val)
				s.settings.KeepPrivate = append(s.settings.KeepPrivate, p)
				s.settings.KeepValues = append(s.settings.KeepValues, KeepValue{Value: val, Path: p})
			case "synchome":
				// git never reads strata's own key, so never dies on it; a
				// value it would refuse leaves the home ref unsynced (unset),
				// not synced as " true" was
				if b, ok := gitBool(val, hasVal); ok {
					s.settings.SyncHome = &b
				} else {
					s.settings.SyncHome = nil
				}
			}
		})
	}
	return s.settings
}

// badConfigLine returns the line git 2.39's config parser stops at
// (config.c, git_parse_source), 0 when it reads data to its end: git dies
// there ("bad config line N") in every command that reads the file. It
// follows git's grammar, not parseConfig's more lenient one: a name starts
// with a letter and holds letters, digits and '-' only (a key outside any
// section may not hold a '.'); a section header is [name] or [name
// "sub"] with the ']' right after the quote; after a key only '=' or the
// end of the line may follow; a value's escapes are \n, \t, \b, \\ and \"
// (and a backslash at the end of the line continues it), and a quote is
// closed on its line.
func badConfigLine(data string) int {
	i, line := 0, 1
	// git's get_next_char: "\r\n" is '\n'; the end of data reads as a last '\n'
	eof := false
	next := func() byte {
		if i >= len(data) {
			eof = true
			line++
			return '\n'
		}
		c := data[i]
		i++
		if c == '\r' && i < len(data) && data[i] == '\n' {
			c = '\n'
			i++
		}
		if c == '\n' {
			line++
		}
		return c
	}
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	isAlpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isKeyChar := func(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

	// get_base_var and get_extended_base_var: reads after '[' up to and
	// with ']'; the name's length, -1 when git refuses the header
	header := func() int {
		n := 0
		for {
			c := next()
			switch {
			case eof:
				return -1
			case c == ']':
				return n
			case isSpace(c):
				for ; isSpace(c); c = next() {
					if c == '\n' {
						line--
						return -1
					}
				}
				if c != '"' {
					return -1
				}
				n++
				for {
					c := next()
					if c == '\n' {
						line--
						return -1
					}
					if c == '"' {
						break
					}
					if c == '\\' {
						if next() == '\n' {
							line--
							return -1
						}
					}
					n++
				}
				if next() != ']' {
					return -1
				}
				return n
			case !isKeyChar(c) && c != '.':
				return -1
			}
			n++
		}
	}
	// parse_value: false when git refuses the value
	value := func() bool {
		quote, comment := false, false
		for {
			c := next()
			switch {
			case c == '\n':
				if quote {
					line--
					return false
				}
				return true
			case comment:
			case !quote && isSpace(c):
			case !quote && (c == ';' || c == '#'):
				comment = true
			case c == '\\':
				switch next() {
				case '\n', 't', 'b', 'n', '\\', '"':
				default:
					return false
				}
			case c == '"':
				quote = !quote
			}
		}
	}

	if strings.HasPrefix(data, "\xef\xbb\xbf") {
		i = 3
	}
	comment := false
	for {
		c := next()
		switch {
		case c == '\n':
			if eof {
				return 0
			}
			comment = false
			continue
		case comment, isSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			if header() < 1 {
				return line
			}
			continue
		case !isAlpha(c):
			return line
		}
		// get_value: the rest of the key, then '=' and a value, or the end
		for c = next(); !eof && isKeyChar(c); c = next() {
		}
		for c == ' ' || c == '\t' {
			c = next()
		}
		if c != '\n' && (c != '=' || !value()) {
			return line
		}
	}
}
