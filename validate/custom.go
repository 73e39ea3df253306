package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/strata-dev/strata/state"
)

// custom returns the user's schema file name (repo-relative), compiled once.
// A schema that cannot be used is cached too, as the problem to report.
func (v *Validator) custom(name string) *compiled {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.cache[name]; ok {
		return c
	}
	c := v.compileCustom(name)
	v.cache[name] = c
	return c
}

func (v *Validator) compileCustom(name string) *compiled {
	broken := func(format string, args ...any) *compiled {
		return &compiled{broken: "schema " + strconv.Quote(name) + " " + fmt.Sprintf(format, args...)}
	}
	file, err := v.resolve(name)
	if err != nil {
		return broken("is %v", err)
	}
	data, err := v.readSchema(name, file)
	if err != nil {
		return broken("cannot be read: %v", err)
	}
	doc, _, ps := decodeJSON(name, data)
	if ps != nil {
		return &compiled{broken: "schema " + ps[0].Error()}
	}
	root, err := filepath.Abs(v.root)
	if err != nil {
		return broken("cannot be read: %v", err)
	}
	abs := filepath.Join(root, filepath.FromSlash(name))
	loc := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	c := newCompiler()
	c.UseLoader(repoLoader{v: v, root: root})
	if err := c.AddResource(loc, doc); err != nil {
		return broken("is invalid: %s", cleanCompileError(err, root))
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return broken("is invalid: %s", cleanCompileError(err, root))
	}
	return &compiled{schema: sch, base: (&url.URL{Scheme: "file", Path: filepath.ToSlash(root) + "/"}).String()}
}

// readSchema reads the schema file rel (repo-relative; file is its path in
// the work tree) from Options.Files when set, else from the work tree.
func (v *Validator) readSchema(rel, file string) ([]byte, error) {
	if v.files != nil {
		data, err := v.files.ReadFile(rel, v.maxSize)
		if !errors.Is(err, fs.ErrNotExist) || !v.wtToo {
			return data, err
		}
	}
	return v.readSchemaFile(rel, file)
}

// readSchemaFile reads the schema file rel (file in the work tree), which
// must be a regular file (symlinks are never followed) no larger than the
// Validator's max size.
func (v *Validator) readSchemaFile(rel, file string) ([]byte, error) {
	if err := v.insideRepo(file); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("no such file")
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > v.maxSize {
		return nil, fmt.Errorf("file is %d bytes, larger than max_size %d", fi.Size(), v.maxSize)
	}
	if beforeSchemaRead != nil {
		beforeSchemaRead(rel)
	}
	// The checks above were of names; the read resolves file again beneath
	// the work tree and judges the folder it found it in, so a folder
	// swapped for a link out of it meanwhile is not read through.
	data, err := v.tree(filepath.Base(file)).ReadFile(rel, v.maxSize)
	if errors.Is(err, state.ErrOutside) {
		return nil, errors.New("resolves outside the repository through a symbolic link")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, pe.Err
	}
	return data, err
}

// cleanCompileError makes a compiler error one line with repo-relative
// schema locations.
func cleanCompileError(err error, root string) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "file://"+filepath.ToSlash(root)+"/", "")
	s = strings.TrimPrefix(s, "jsonschema: ")
	fields := strings.Split(s, "\n")
	for i := range fields {
		fields[i] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(fields[i]), "- "))
	}
	return oneLine(strings.Join(fields, "; "))
}

// repoLoader loads schema files that a custom schema references ($ref),
// only from inside the repository; nothing outside it is read and nothing
// is fetched from the network.
type repoLoader struct {
	v    *Validator
	root string
}

func (l repoLoader) Load(loc string) (any, error) {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "file" {
		return nil, fmt.Errorf("%s: only schema files inside the repository can be referenced", loc)
	}
	file := filepath.Clean(filepath.FromSlash(u.Path))
	rel, err := filepath.Rel(l.root, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%s: only schema files inside the repository can be referenced", loc)
	}
	if err := checkSchemaPath(filepath.ToSlash(rel)); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
	}
	data, err := l.v.readSchema(filepath.ToSlash(rel), file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// denyLoader refuses every URL: the built-in schemas reference only each
// other and the draft 2020-12 meta-schema, which the compiler holds.
type denyLoader struct{}

func (denyLoader) Load(loc string) (any, error) {
	return nil, fmt.Errorf("%s: schemas are not loaded from outside the binary", loc)
}

// errInGit is a schema file named, or referenced, inside .git.
var errInGit = errors.New("inside .git; not read")

// checkSchemaPath checks a schema file's repo-relative, slash-separated
// name as a kept path is checked (state.CheckPath): a .git element in any
// spelling is errInGit, any other fault (absolute, "..") says the name is
// not in the repository.
func checkSchemaPath(rel string) error {
	err := state.CheckPath(rel)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, state.ErrDotGit):
		return errInGit
	}
	return errors.New("not a repo-relative path inside the repository")
}

// insideRepo checks that file, with every symbolic link of its directories
// resolved, is still inside the repository and not inside a git directory:
// a link such as schemas/x -> /etc or schemas/x -> ../.git must not let a
// schema (or a $ref) read any file on the machine or of the repository's
// git data.
func (v *Validator) insideRepo(file string) error {
	root, err := filepath.EvalSymlinks(v.root)
	if err != nil {
		return err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(file))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("no such file")
		}
		return err
	}
	real := filepath.Join(dir, filepath.Base(file))
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return errors.New("resolves outside the repository through a symbolic link")
	}
	if errors.Is(checkSchemaPath(filepath.ToSlash(rel)), errInGit) || v.inGitDir(real) {
		return errors.New("resolves inside the git directory; not read")
	}
	return nil
}

// beforeSchemaRead, when set by a test, runs between readSchemaFile's
// checks and its read: where a racing process swaps a folder.
var beforeSchemaRead func(rel string)

// tree is the work tree as the door schema files are read through
// (state.Tree), judging the real folder of a file named base as
// insideRepo judges it.
func (v *Validator) tree(base string) state.Tree {
	real, err := filepath.EvalSymlinks(v.root)
	if err != nil {
		real = v.root
	}
	return state.Tree{Root: v.root, Real: real, Judge: func(dir string) error {
		file := filepath.Join(dir, base)
		rel, _ := filepath.Rel(real, file)
		if errors.Is(checkSchemaPath(filepath.ToSlash(rel)), errInGit) || v.inGitDir(file) {
			return errors.New("resolves inside the git directory; not read")
		}
		return nil
	}}
}

// inGitDir reports whether real (symlinks resolved) is inside one of the
// repository's git directories (Options.GitDirs), wherever they are.
func (v *Validator) inGitDir(real string) bool {
	for _, d := range v.gitDirs {
		d, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if state.Within(d, real) {
			return true
		}
	}
	return false
}
