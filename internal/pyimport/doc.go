// Package pyimport reads the import graph of a Python source tree without running Python:
// the static `import` and `from … import` statements of every module (relative ones too),
// `importlib.import_module("literal")` and `__import__("literal")`, and the dotted strings
// that name a module of the tree (how registries name the classes they load by qualified
// name). What it cannot read statically — a call that imports a module by a computed name —
// it reports as a Site, for the caller's rules to resolve or to err on.
package pyimport
