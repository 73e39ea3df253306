package atomicfile

// RenameIn renames the file old to new, both base names in the directory
// dirPath, and fsyncs the directory. As a Batch does, it opens the
// directory first and has ok (when not nil) judge where it really is; on
// Linux the rename is then taken relative to that open directory, so a
// folder swapped for a symbolic link after the check is never renamed
// through. ok's error is returned as it is.
func RenameIn(dirPath, old, new string, ok func(dir, real string) error) error {
	d, err := openDir(dirPath)
	if err != nil {
		return err
	}
	defer d.close()
	if err := d.judge(ok); err != nil {
		return err
	}
	if err := d.rename(old, new); err != nil {
		return err
	}
	d.sync()
	return nil
}
