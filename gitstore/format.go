package gitstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/strata-dev/strata/state"
)

// knownExtensions are the repository extensions strata can work under, with
// the only value it accepts ("" for any): what git 2.39 knows, minus the
// SHA-256 object format (strata writes SHA-1 objects and 40-digit refs) and
// plus the reftable ref storage's "files" (strata reads and writes loose
// refs and packed-refs).
var knownExtensions = map[string]string{
	"noop":            "",
	"noop-v1":         "",
	"preciousobjects": "", // nothing strata does deletes objects
	"partialclone":    "",
	"worktreeconfig":  "",
	"objectformat":    "sha1",
	"refstorage":      "files",
}

// checkFormat refuses a repository strata would damage: one whose
// core.repositoryformatversion is past 1, or that declares an extension it
// does not know or an object format or ref storage other than SHA-1 and
// files. git itself refuses the first two; strata refuses the last two too,
// before it writes anything, since a SHA-1 object or ref in a SHA-256
// repository breaks git fsck, git gc and git log --all. As in git 2.39
// (setup.c): an extensions.objectformat git cannot read is refused at any
// version; version 0 refuses the extensions git knows only under version 1
// (objectformat, noop-v1) and ignores the others; a config that sets no
// version (or a negative one) ignores every extension.
//
// It also reports whether the repository is a partial clone (a remote with
// promisor = true, or extensions.partialClone naming one): objects it lacks
// may be fetched on demand (Store.readObject).
func checkFormat(commonDir string) (partial bool, err error) {
	defer func() {
		if _, ok := err.(*FormatError); err != nil && !ok {
			err = &FormatError{Msg: err.Error()}
		}
	}()
	f, err := openRegular(filepath.Join(commonDir, "config"))
	if err != nil {
		return false, nil // no config: git's defaults, version 0
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return false, nil
	}
	if len(data) == 1<<20 { // read no further: the last line may be cut
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	if line := badConfigLine(string(data)); line > 0 {
		file := filepath.Join(commonDir, "config")
		return false, &FormatError{
			Msg: fmt.Sprintf("%s:%d: a line git cannot read (git refuses the repository too: \"bad config line %d\"); nothing was written", file, line, line),
			Fix: fmt.Sprintf("edit line %d of %s by hand (a key outside any section, a name with other characters than letters, digits and '-', an unclosed quote or an unknown escape): git runs no command in the repository while it is there", line, file),
		}
	}
	var n int64 = -1 // none set: git reads no extension (but for the values it dies on)
	bad, badSet := "", false
	var badBool, badFormat *FormatError
	ext := map[string]string{}
	parseConfig(string(data), func(sec, sub, key, val string, hasVal bool) {
		if name, ok := gitBoolKey(sec, sub, key); ok {
			// git dies on each of these in nearly every command (git
			// status, commit, fsck; a lazy fetch for remote.*.promisor):
			// read as false, core.sparseCheckout or core.ignoreCase would
			// give strata other rules than git's, core.bare another work
			// tree, and a promisor remote's objects would be damage
			b, ok := gitBool(val, hasVal)
			if !ok && badBool == nil {
				badBool = boolError(filepath.Join(commonDir, "config"), name, val)
			}
			if ok && b && sec == "remote" {
				partial = true
			}
		}
		switch {
		case sec == "core" && sub == "" && key == "repositoryformatversion":
			// git reads each value with git_config_int (parseGitInt: "01"
			// and "0x1" are 1, "010" is 8, a unit k, m or g multiplies)
			// and dies at the first it cannot read, as an integer
			// (a value left out too), whatever follows
			v, ok := parseGitInt(val)
			switch {
			case badSet:
			case !ok || !hasVal:
				bad, badSet = val, true
			default:
				n = v
			}
		case sec == "extensions" && sub == "":
			ext[key] = strings.ToLower(strings.TrimSpace(val))
			if key == "objectformat" && badFormat == nil {
				badFormat = objectFormatError(commonDir, val, hasVal)
			}
		case sec == "extensions":
			// git takes all after "extensions." for the extension's name,
			// the subsection's case kept: [extensions "x"] objectformat is
			// x.objectformat, which no git knows (attack37d L8)
			ext[sub+"."+key] = strings.ToLower(strings.TrimSpace(val))
		}
	})
	switch {
	case badBool != nil && !badSet:
		return false, badBool
	case badSet:
		return false, fmt.Errorf("%s: core.repositoryformatversion %q is not a number git reads (git refuses it too: \"bad numeric config value\"); nothing was written", commonDir, bad)
	case badFormat != nil:
		return false, badFormat
	case n < 0:
		return partial, nil
	case n == 0:
		// git 2.39 (setup.c, handle_extension) knows these only under
		// version 1, and refuses a version-0 repository that declares one:
		// a SHA-256 repository whose version was lowered to 0 would get
		// SHA-1 objects and a 40-digit ref that git then calls corrupt
		for _, key := range []string{"objectformat", "noop-v1"} {
			if _, ok := ext[key]; ok {
				return false, &FormatError{
					Msg: fmt.Sprintf("%s: core.repositoryformatversion is 0, but the repository declares extensions.%s, an extension of version 1 only (git refuses it too: \"repo version is 0, but v1-only extension found\"); nothing was written", commonDir, key),
					Fix: "git config core.repositoryformatversion 1 if the repository was made with extensions." + key + " (git init --object-format), else git config --unset extensions." + key,
				}
			}
		}
		return partial, nil
	case n > 1:
		return false, fmt.Errorf("%s: repository format version %d is newer than strata knows (git 2.39 knows 0 and 1); nothing was written", commonDir, n)
	}
	for key, val := range ext {
		want, known := knownExtensions[key]
		switch {
		case !known:
			return false, &FormatError{
				Msg: fmt.Sprintf("%s: the repository declares extensions.%s, which strata does not know (git 2.39 refuses it too: \"unknown repository extension found: %s\"); nothing was written", commonDir, state.TermSafe(key), state.TermSafe(key)),
				Fix: "use a git and a strata that know extensions." + state.TermSafe(key) + ", or, if nothing set it on purpose, remove it: git config -f " + state.ShellWord(filepath.Join(commonDir, "config")) + " --unset " + state.ShellWord("extensions."+key),
			}
		case want != "" && val != want:
			return false, fmt.Errorf("%s: extensions.%s = %s: strata works only in repositories whose extensions.%s is %s; nothing was written", commonDir, key, val, key, want)
		}
	}
	return partial || ext["partialclone"] != "", nil
}

// objectFormatError is the refusal of an extensions.objectformat line git
// 2.39 dies on whatever the version (setup.c, handle_extension): one with no
// value, or a value other than its hash algorithms' names, "sha1" and
// "sha256", exactly ("SHA1" is none); nil for a value git takes.
func objectFormatError(commonDir, val string, hasVal bool) *FormatError {
	const fix = "git config extensions.objectformat sha1 (sha256 in a repository made with git init --object-format=sha256), in lower case"
	switch {
	case !hasVal:
		return &FormatError{Msg: commonDir + ": extensions.objectformat has no value (git refuses it too: \"missing value for 'extensions.objectformat'\"); nothing was written", Fix: fix}
	case val != "sha1" && val != "sha256":
		return &FormatError{Msg: fmt.Sprintf("%s: extensions.objectformat %q is no object format git knows (git refuses it too: \"invalid value for 'extensions.objectformat'\", git knows sha1 and sha256); nothing was written", commonDir, val), Fix: fix}
	}
	return nil
}

// checkObjectDir refuses $GIT_OBJECT_DIRECTORY where git 2.39 finds no
// repository under it, and where it names another object store than the
// repository's own (<commondir>/objects).
//
// git checks the value before it takes any folder for a git directory
// (is_git_directory: access(2) of the value, from the current folder, in
// discovery and under $GIT_DIR alike): an empty value, or one that names no
// folder from there (".git/objects" run in a subfolder of the work tree),
// makes every folder fail, and git says "not a git repository". strata
// refuses there too, rather than run where git does not.
//
// Naming another store, git reads and writes objects there, while strata's
// own reads and writes (internal/odb) use the repository's, so
// refs/strata/state would point at commits git in that environment cannot
// see (git log and fsck fail on it, a push is rejected). Once it found the
// repository, git takes a relative value from the top of the work tree
// when it runs inside it (it moves there), else from the current folder
// (dir); under $GIT_DIR (explicit), where git without a work tree setting
// stays in the current folder and strata's git processes run at the top,
// either is accepted. Naming the repository's own store so, the value is
// harmless and accepted.
func checkObjectDir(commonDir, dir, root string, explicit bool) error {
	env, set := os.LookupEnv("GIT_OBJECT_DIRECTORY")
	if !set {
		return nil
	}
	const noRepo = "git finds no repository under it (\"not a git repository\"); unset GIT_OBJECT_DIRECTORY to run strata; nothing was written"
	const noRepoFix = "unset GIT_OBJECT_DIRECTORY to run strata (git finds no repository under it either)"
	if env == "" {
		return &FormatError{Msg: "$GIT_OBJECT_DIRECTORY is set but empty: " + noRepo, Fix: noRepoFix}
	}
	named := env
	if !filepath.IsAbs(named) {
		named = filepath.Join(dir, env)
	}
	if _, err := os.Stat(named); err != nil {
		where := ""
		if !filepath.IsAbs(env) {
			where = " from " + dir + ", where strata runs (a relative value is taken from there)"
		}
		return &FormatError{Msg: fmt.Sprintf("$GIT_OBJECT_DIRECTORY = %s names no folder%s: %s", env, where, noRepo), Fix: noRepoFix}
	}
	own := fromDir(commonDir, "objects")
	base := dir
	if root != "" && (dir == root || strings.HasPrefix(dir, root+string(filepath.Separator))) {
		base = root
	}
	if fromDir(base, env) == own || explicit && (fromDir(dir, env) == own || root != "" && fromDir(root, env) == own) {
		return nil
	}
	why := ""
	if fromDir(dir, env) == own {
		why = fmt.Sprintf(", and git takes a relative value from the top of the work tree (%s) once it found the repository", base)
	}
	return &FormatError{
		Msg: fmt.Sprintf("$GIT_OBJECT_DIRECTORY = %s: strata works only with the repository's own object store (%s)%s; nothing was written", env, own, why),
		Fix: "unset GIT_OBJECT_DIRECTORY to run strata (git writes the objects it names there, not in " + own + ", and strata's refs would point at objects git cannot see)",
	}
}

// gitBoolKey reports whether sec.sub.key (section and key lowercase) is a
// boolean git 2.39 reads from the repository's config at every start
// (check_repository_format, git_default_config) or, for remote.*.promisor,
// in git status, commit, fsck and any lazy fetch, dying on a value it
// cannot read; name is the key as git names it then.
func gitBoolKey(sec, sub, key string) (name string, ok bool) {
	switch {
	case sec == "remote" && sub != "" && key == "promisor":
		return "remote." + sub + ".promisor", true
	case sub != "":
		return "", false
	}
	switch name = sec + "." + key; name {
	case "core.bare", "core.ignorecase", "core.sparsecheckout", "sparse.expectfilesoutsideofpatterns",
		"extensions.worktreeconfig", "extensions.preciousobjects":
		return name, true
	}
	return "", false
}

// FormatError is Open's refusal of a repository whose format strata would
// damage (checkFormat), or of a setting of git's it cannot follow
// (checkObjectDir): exit 3, and a fail finding of doctor, whose fix is Fix
// when set.
type FormatError struct{ Msg, Fix string }

func (e *FormatError) Error() string { return e.Msg }

// shallowList is the shallow clone's boundary, read on the first commit
// read (a hook call that reads none pays nothing).
func (s *Store) shallowList() map[plumbing.Hash]bool {
	s.shallowOnce.Do(func() { s.shallow = readShallow(s.commonDir) })
	return s.shallow
}

// readShallow reads a shallow clone's boundary (<commondir>/shallow, one
// commit id a line): commits whose parents git does not have and reads as
// having none. strata does the same, so the merge-base walk, the time index
// and log stop there instead of failing on a missing parent.
func readShallow(commonDir string) map[plumbing.Hash]bool {
	data, err := state.ReadRegular(filepath.Join(commonDir, "shallow"), 0, true)
	if err != nil {
		return nil
	}
	out := map[plumbing.Hash]bool{}
	for _, line := range strings.Fields(string(data)) {
		if plumbing.IsHash(line) {
			out[plumbing.NewHash(line)] = true
		}
	}
	return out
}
